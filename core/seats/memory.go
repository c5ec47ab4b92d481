package seats

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"seatflow/core"
)

// Interface is what both seat stores offer: core.SeatStore plus the reads
// and guarded repairs that reconcile, retention and tools use.
type Interface interface {
	core.SeatStore
	BlockEntries(ctx context.Context, showID int64) ([]core.SeatBlock, error)
	Limits(ctx context.Context, showID int64) (map[int64]int, error)
	SetLimit(ctx context.Context, showID, userID int64, n int) error
	SetLimitIf(ctx context.Context, showID, userID int64, expected, n int) (bool, error)
	ReleaseIfLockedBefore(ctx context.Context, showID int64, seatID, orderNo string, before time.Time) (bool, error)
	RestoreBlocks(ctx context.Context, showID int64, blocks []core.SeatBlock, seen map[string]core.SeatBlock) ([]string, error)
	UnblockIfBlockedBefore(ctx context.Context, showID int64, seatIDs []string, before time.Time) ([]string, error)
	DeleteShow(ctx context.Context, showID int64) error
}

var (
	_ Interface = (*Store)(nil)
	_ Interface = (*Memory)(nil)
)

// Memory is the seat store of the embedded stack: the Redis store's rules
// (the .lua scripts) in plain Go, on state held in this process. One
// process serves it, so there is nothing to share and nothing to survive a
// restart: the state is rebuilt from the DB at start, as with the embedded
// Redis before it. Each show has a mutex of its own; every method holds it
// for its whole change, so no reader sees half of one, as with a script.
// It is safe for concurrent use.
type Memory struct {
	mu    sync.RWMutex
	shows map[int64]*memShow
}

// memShow is one show's state: the three hashes of the Redis store.
type memShow struct {
	mu      sync.Mutex
	gone    bool // deleted by DeleteShow: look the show up again
	seats   map[string]memHold
	limits  map[int64]int
	blocked map[string]memBlock
	// bounds are core.ChooseBest's for the index tagged boundsTag; nil
	// once a seat is freed or taken but by ChooseAndLock (forgetBounds).
	bounds    core.RowBounds
	boundsTag string
}

// forgetBounds is called by every change of which seats are free but
// ChooseAndLock's own, which core.ChooseBest records (core.RowBounds).
func (sh *memShow) forgetBounds() { sh.bounds = nil }

// memHold is a non-available seat, as the Redis store's value holds it:
// the lock time at millisecond precision, 0 for none.
type memHold struct {
	state   core.SeatState
	orderNo string
	userID  int64
	lockMS  int64
}

// memBlock is a blocked seat: its reason and block time (ms, 0 for none).
type memBlock struct {
	reason string
	ms     int64
}

// NewMemory returns an empty in-process seat store.
func NewMemory() *Memory { return &Memory{shows: make(map[int64]*memShow)} }

// lockShow returns showID's state locked, creating it when create is set;
// nil (and nothing locked) when it does not exist and create is not set.
// A show deleted while the caller waited for its lock is looked up again,
// so no change lands in a deleted show's orphaned state.
func (m *Memory) lockShow(showID int64, create bool) *memShow {
	for {
		m.mu.RLock()
		sh := m.shows[showID]
		m.mu.RUnlock()
		if sh == nil {
			if !create {
				return nil
			}
			m.mu.Lock()
			if sh = m.shows[showID]; sh == nil {
				sh = &memShow{seats: map[string]memHold{}, limits: map[int64]int{}, blocked: map[string]memBlock{}}
				m.shows[showID] = sh
			}
			m.mu.Unlock()
		}
		sh.mu.Lock()
		if !sh.gone {
			return sh
		}
		sh.mu.Unlock()
	}
}

// interrupted is what the Redis store returns for a request whose ctx is
// done before it reaches Redis: an outage-kind error wrapping ctx.Err(), so
// callers (and the HTTP layer's 499 for a client that left) see the same.
func interrupted(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return &core.Error{Kind: core.KindUnavailable, Code: core.ErrStoreUnavailable.Code,
			Message: "seats: " + op, Err: err}
	}
	return nil
}

// Lock implements core.SeatStore (lock.lua); limit <= 0 means no limit.
func (m *Memory) Lock(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string, limit int, now time.Time) error {
	return m.lockSeats(ctx, showID, userID, orderNo, seatIDs, limit, now, false)
}

// LockBlocked implements core.SeatStore: Lock that may take blocked seats.
func (m *Memory) LockBlocked(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string, limit int, now time.Time) error {
	return m.lockSeats(ctx, showID, userID, orderNo, seatIDs, limit, now, true)
}

func (m *Memory) lockSeats(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string, limit int, now time.Time, allowBlocked bool) error {
	if err := checkLock(orderNo, seatIDs); err != nil {
		return err
	}
	if err := interrupted(ctx, fmt.Sprintf("lock seats of show %d for order %s", showID, orderNo)); err != nil {
		return err
	}
	sh := m.lockShow(showID, true)
	defer sh.mu.Unlock()
	var taken []string
	for _, id := range seatIDs {
		_, held := sh.seats[id]
		_, blocked := sh.blocked[id]
		if held || (blocked && !allowBlocked) {
			taken = append(taken, id)
		}
	}
	if taken != nil {
		return core.SeatsUnavailable(taken)
	}
	if limit > 0 && sh.limits[userID]+len(seatIDs) > limit {
		return fmt.Errorf("seats: lock %d seats of show %d for user %d (limit %d): %w",
			len(seatIDs), showID, userID, limit, core.ErrPurchaseLimit)
	}
	h := memHold{state: core.SeatLocked, orderNo: orderNo, userID: userID, lockMS: now.UnixMilli()}
	for _, id := range seatIDs {
		sh.seats[id] = h
	}
	sh.limits[userID] += len(seatIDs)
	sh.forgetBounds()
	return nil
}

// uncount takes one seat off a user's counter; the counter goes at zero
// (counter.lua's uncount).
func (sh *memShow) uncount(userID int64) {
	if n := sh.limits[userID] - 1; n > 0 {
		sh.limits[userID] = n
	} else {
		delete(sh.limits, userID)
	}
}

// Release implements core.SeatStore (release.lua on locked seats).
func (m *Memory) Release(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string) (int, error) {
	return m.releaseHeld(ctx, showID, orderNo, core.SeatLocked, seatIDs,
		fmt.Sprintf("release seats of show %d for order %s (user %d)", showID, orderNo, userID))
}

// ReleaseSold implements core.SeatStore (release.lua on sold seats).
func (m *Memory) ReleaseSold(ctx context.Context, showID int64, orderNo string, seatIDs []string) (int, error) {
	return m.releaseHeld(ctx, showID, orderNo, core.SeatSold, seatIDs,
		fmt.Sprintf("release seats of show %d sold to order %s", showID, orderNo))
}

// releaseHeld frees the seats orderNo holds in state; the counter given back
// is the stored holder's.
func (m *Memory) releaseHeld(ctx context.Context, showID int64, orderNo string, state core.SeatState, seatIDs []string, op string) (int, error) {
	if err := checkOrderNo(orderNo); err != nil {
		return 0, err
	}
	if len(seatIDs) == 0 {
		return 0, nil
	}
	if err := interrupted(ctx, op); err != nil {
		return 0, err
	}
	sh := m.lockShow(showID, false)
	if sh == nil {
		return 0, nil
	}
	defer sh.mu.Unlock()
	released := 0
	for _, id := range seatIDs {
		if h, ok := sh.seats[id]; ok && h.state == state && h.orderNo == orderNo {
			delete(sh.seats, id)
			sh.forgetBounds()
			sh.uncount(h.userID)
			released++
		}
	}
	return released, nil
}

// MarkSold implements core.SeatStore (sell.lua): it overwrites whatever each
// seat holds; a seat already counted for the buyer changes no counter,
// otherwise the buyer gains one and a previous holder loses one. The lock
// time is kept when the seat was held by this order, else 0.
func (m *Memory) MarkSold(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string) error {
	if err := checkOrderNo(orderNo); err != nil {
		return err
	}
	if len(seatIDs) == 0 {
		return nil
	}
	if err := interrupted(ctx, fmt.Sprintf("mark seats of show %d sold to order %s", showID, orderNo)); err != nil {
		return err
	}
	sh := m.lockShow(showID, true)
	defer sh.mu.Unlock()
	for _, id := range seatIDs {
		prev, held := sh.seats[id]
		var lockMS int64
		if held && prev.orderNo == orderNo {
			lockMS = prev.lockMS
		}
		if !held || prev.userID != userID {
			if held {
				sh.uncount(prev.userID)
			}
			sh.limits[userID]++
		}
		sh.seats[id] = memHold{state: core.SeatSold, orderNo: orderNo, userID: userID, lockMS: lockMS}
	}
	sh.forgetBounds()
	return nil
}

// ReleaseIfLockedBefore frees one seat only if it is still locked by
// orderNo and was locked before before (release_before.lua).
func (m *Memory) ReleaseIfLockedBefore(ctx context.Context, showID int64, seatID, orderNo string, before time.Time) (bool, error) {
	if err := checkOrderNo(orderNo); err != nil {
		return false, err
	}
	if err := interrupted(ctx, fmt.Sprintf("release stale seat %s of show %d (order %s)", seatID, showID, orderNo)); err != nil {
		return false, err
	}
	sh := m.lockShow(showID, false)
	if sh == nil {
		return false, nil
	}
	defer sh.mu.Unlock()
	h, ok := sh.seats[seatID]
	if !ok || h.state != core.SeatLocked || h.orderNo != orderNo || h.lockMS >= before.UnixMilli() {
		return false, nil
	}
	delete(sh.seats, seatID)
	sh.forgetBounds()
	sh.uncount(h.userID)
	return true, nil
}

// Holds implements core.SeatStore; sorted by seat id (byte-wise), lock
// times in UTC at millisecond precision, zero when there is none.
func (m *Memory) Holds(ctx context.Context, showID int64) ([]core.SeatHold, error) {
	if err := interrupted(ctx, fmt.Sprintf("read seats of show %d", showID)); err != nil {
		return nil, err
	}
	sh := m.lockShow(showID, false)
	if sh == nil {
		return []core.SeatHold{}, nil
	}
	holds := make([]core.SeatHold, 0, len(sh.seats))
	for id, h := range sh.seats {
		holds = append(holds, core.SeatHold{SeatID: id, State: h.state, OrderNo: h.orderNo, UserID: h.userID, LockedAt: msTime(h.lockMS)})
	}
	sh.mu.Unlock()
	slices.SortFunc(holds, func(a, b core.SeatHold) int { return strings.Compare(a.SeatID, b.SeatID) })
	return holds, nil
}

// msTime is a stored millisecond time in UTC; 0 is the zero time.
func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// Replace implements core.SeatStore: the show's seats and counters become
// exactly what holds imply, or nothing changes when holds are invalid.
func (m *Memory) Replace(ctx context.Context, showID int64, holds []core.SeatHold) error {
	seats := make(map[string]memHold, len(holds))
	limits := make(map[int64]int)
	for _, h := range holds {
		if _, dup := seats[h.SeatID]; dup {
			return core.Invalidf("seat %q appears twice in show %d", h.SeatID, showID)
		}
		if _, err := encode(h); err != nil {
			return err
		}
		var ms int64
		if !h.LockedAt.IsZero() {
			ms = h.LockedAt.UnixMilli()
		}
		seats[h.SeatID] = memHold{state: h.State, orderNo: h.OrderNo, userID: h.UserID, lockMS: ms}
		limits[h.UserID]++
	}
	if err := interrupted(ctx, fmt.Sprintf("replace seats of show %d", showID)); err != nil {
		return err
	}
	sh := m.lockShow(showID, true)
	defer sh.mu.Unlock()
	sh.seats, sh.limits = seats, limits
	sh.forgetBounds()
	return nil
}

// Limits returns the show's purchase counters: userID → seats locked or sold.
func (m *Memory) Limits(ctx context.Context, showID int64) (map[int64]int, error) {
	if err := interrupted(ctx, fmt.Sprintf("read purchase counters of show %d", showID)); err != nil {
		return nil, err
	}
	sh := m.lockShow(showID, false)
	if sh == nil {
		return map[int64]int{}, nil
	}
	defer sh.mu.Unlock()
	return maps.Clone(sh.limits), nil
}

// SetLimit sets one user's purchase counter; 0 removes it (see Store.SetLimit).
func (m *Memory) SetLimit(ctx context.Context, showID, userID int64, n int) error {
	if n < 0 {
		return core.Invalidf("purchase counter %d is negative", n)
	}
	if err := interrupted(ctx, fmt.Sprintf("set purchase counter of user %d in show %d", userID, showID)); err != nil {
		return err
	}
	sh := m.lockShow(showID, true)
	defer sh.mu.Unlock()
	sh.setLimit(userID, n)
	return nil
}

func (sh *memShow) setLimit(userID int64, n int) {
	if n == 0 {
		delete(sh.limits, userID)
	} else {
		sh.limits[userID] = n
	}
}

// SetLimitIf sets one user's purchase counter to n only if it still is
// expected, a missing counter being 0 (limit_cas.lua).
func (m *Memory) SetLimitIf(ctx context.Context, showID, userID int64, expected, n int) (bool, error) {
	if n < 0 || expected < 0 {
		return false, core.Invalidf("purchase counter %d (expected %d) is negative", n, expected)
	}
	if err := interrupted(ctx, fmt.Sprintf("set purchase counter of user %d in show %d", userID, showID)); err != nil {
		return false, err
	}
	sh := m.lockShow(showID, true)
	defer sh.mu.Unlock()
	if sh.limits[userID] != expected {
		return false, nil
	}
	sh.setLimit(userID, n)
	return true, nil
}

// Ping implements core.SeatStore: the store is this process, so only a
// request that is over already fails.
func (m *Memory) Ping(ctx context.Context) error { return interrupted(ctx, "ping") }

// DeleteShow removes a show that is over: its seats, counters and blocks.
// Deleting a show that is gone already is not an error.
func (m *Memory) DeleteShow(ctx context.Context, showID int64) error {
	if err := interrupted(ctx, "delete show keys"); err != nil {
		return err
	}
	sh := m.lockShow(showID, false)
	if sh == nil {
		return nil
	}
	defer sh.mu.Unlock()
	m.mu.Lock()
	delete(m.shows, showID)
	m.mu.Unlock()
	sh.gone = true
	return nil
}
