// Package seats is the Redis implementation of core.SeatStore: per-show seat
// state and per-user purchase counters, changed only by Lua scripts so each
// change is atomic.
//
// Keys are hash-tagged per show ({show:<id>}) so every script touches one
// Redis Cluster slot:
//
//	sf:{show:<id>}:seats  hash seatID → "state|orderNo|userID|lockMs"
//	                      (state 1 locked, 2 sold; available seats have no field)
//	sf:{show:<id>}:limit  hash userID → seats the user holds locked or sold
//	sf:{show:<id>}:blocked hash seatID → "reason|blockMs"; apart from the seats
//	                      hash, so a blocked seat sold at the box office is
//	                      blocked again when its order lets it go
//
// Nothing here relies on TTLs: stale locks are freed by reconcile, and the
// whole view can be rebuilt from the DB with Replace.
package seats

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
	"seatflow/core/gather"
)

var (
	//go:embed counter.lua
	counterLua string
	//go:embed lock.lua
	lockLua string
	//go:embed release.lua
	releaseLua string
	//go:embed sell.lua
	sellLua string
	//go:embed release_before.lua
	releaseBeforeLua string
	//go:embed block.lua
	blockLua string
	//go:embed unblock_before.lua
	unblockBeforeLua string
	//go:embed restore_block.lua
	restoreBlockLua string
)

var _ core.SeatStore = (*Store)(nil)

// MaxLockSeats caps one Lock: lock.lua passes the seats to HMGET and HSET
// with unpack, which must stay within Lua's stack (about 8000 values).
const MaxLockSeats = 1000

// Store is the Redis seat store. It is safe for concurrent use.
type Store struct {
	rdb           redis.UniversalClient
	lock          *redis.Script
	release       *redis.Script
	sell          *redis.Script
	releaseBefore *redis.Script
	block         *redis.Script
	unblockBefore *redis.Script
	restoreBlock  *redis.Script
	best          bestQueues                   // the show's best-available choices under way
	scripts       *gather.Batcher[*scriptCall] // lock and sell runs, pipelined (lockbatch.go)
}

// New returns a Store on client (see Dial). Scripts run with EVALSHA and fall
// back to EVAL when the server does not have them cached.
func New(client redis.UniversalClient) *Store {
	s := &Store{
		rdb:           client,
		lock:          redis.NewScript(lockLua),
		release:       redis.NewScript(counterLua + releaseLua),
		sell:          redis.NewScript(counterLua + sellLua),
		releaseBefore: redis.NewScript(counterLua + releaseBeforeLua),
		block:         redis.NewScript(blockLua),
		unblockBefore: redis.NewScript(unblockBeforeLua),
		restoreBlock:  redis.NewScript(restoreBlockLua),
	}
	s.scripts = gather.New(scriptRunners, scriptMaxBatch, s.runScripts)
	return s
}

// KeySeats is the hash of a show's non-available seats.
func KeySeats(showID int64) string { return fmt.Sprintf("sf:{show:%d}:seats", showID) }

// KeyLimit is the hash of a show's per-user purchase counters.
func KeyLimit(showID int64) string { return fmt.Sprintf("sf:{show:%d}:limit", showID) }

// KeyBlocked is the hash of a show's blocked seats.
func KeyBlocked(showID int64) string { return fmt.Sprintf("sf:{show:%d}:blocked", showID) }

// changeKeys are the keys of a script that frees or takes seats: the
// seats and limit hashes, and the best-available bounds it deletes
// (KeyBestBounds).
func changeKeys(showID int64) []string {
	return []string{KeySeats(showID), KeyLimit(showID), KeyBestBounds(showID)}
}

// Lock implements core.SeatStore; limit <= 0 means no limit. A seat already
// locked by the same order counts as unavailable: Lock is not idempotent.
func (s *Store) Lock(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string, limit int, now time.Time) error {
	return s.lockSeats(ctx, showID, userID, orderNo, seatIDs, limit, now, false)
}

// LockBlocked implements core.SeatStore: Lock that may take blocked seats.
func (s *Store) LockBlocked(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string, limit int, now time.Time) error {
	return s.lockSeats(ctx, showID, userID, orderNo, seatIDs, limit, now, true)
}

func (s *Store) lockSeats(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string, limit int, now time.Time, allowBlocked bool) error {
	if err := checkLock(orderNo, seatIDs); err != nil {
		return err
	}
	allow := "0"
	if allowBlocked {
		allow = "1"
	}
	args := make([]any, 0, 5+len(seatIDs))
	args = append(args, orderNo, strconv.FormatInt(userID, 10), limit, now.UnixMilli(), allow)
	for _, id := range seatIDs {
		args = append(args, id)
	}
	if ctx.Err() != nil { // checked here: a batch runs on when one of its callers hangs up
		return interrupted(ctx, fmt.Sprintf("lock seats of show %d for order %s", showID, orderNo))
	}
	res, err := s.runScript(ctx, s.lock, []string{KeySeats(showID), KeyLimit(showID), KeyBlocked(showID), KeyBestBounds(showID)}, args...).StringSlice()
	if err != nil {
		return wrap(fmt.Sprintf("lock seats of show %d for order %s", showID, orderNo), err)
	}
	switch res[0] {
	case "ok":
		return nil
	case "limit":
		return fmt.Errorf("seats: lock %d seats of show %d for user %d (limit %d): %w",
			len(seatIDs), showID, userID, limit, core.ErrPurchaseLimit)
	case "taken":
		return core.SeatsUnavailable(res[1:])
	}
	return fmt.Errorf("seats: lock seats of show %d: unexpected script reply %q", showID, res)
}

// Release implements core.SeatStore. The counter given back is the one Lock
// charged, the stored holder's, so userID is not needed by the script.
func (s *Store) Release(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string) (int, error) {
	return s.releaseHeld(ctx, showID, orderNo, stateLocked, seatIDs,
		fmt.Sprintf("release seats of show %d for order %s (user %d)", showID, orderNo, userID))
}

// The state digits of a stored seat value, as the scripts write them.
const (
	stateLocked = "1"
	stateSold   = "2"
)

// releaseHeld frees the seats orderNo holds in state (release.lua).
func (s *Store) releaseHeld(ctx context.Context, showID int64, orderNo, state string, seatIDs []string, what string) (int, error) {
	if err := checkOrderNo(orderNo); err != nil {
		return 0, err
	}
	if len(seatIDs) == 0 {
		return 0, nil
	}
	args := make([]any, 0, 2+len(seatIDs))
	args = append(args, orderNo, state)
	for _, id := range seatIDs {
		args = append(args, id)
	}
	n, err := s.release.Run(ctx, s.rdb, changeKeys(showID), args...).Int()
	if err != nil {
		return 0, wrap(what, err)
	}
	return n, nil
}

// MarkSold implements core.SeatStore. It overwrites whatever each seat holds
// and keeps the counters equal to the seats each user holds: see sell.lua.
func (s *Store) MarkSold(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string) error {
	if err := checkOrderNo(orderNo); err != nil {
		return err
	}
	if len(seatIDs) == 0 {
		return nil
	}
	args := make([]any, 0, 2+len(seatIDs))
	args = append(args, orderNo, strconv.FormatInt(userID, 10))
	for _, id := range seatIDs {
		args = append(args, id)
	}
	if err := s.runScript(ctx, s.sell, changeKeys(showID), args...).Err(); err != nil {
		return wrap(fmt.Sprintf("mark seats of show %d sold to order %s", showID, orderNo), err)
	}
	return nil
}

// ReleaseSold implements core.SeatStore: the refund's after-commit step and
// reconcile's repair of it run the same holder-guarded script.
func (s *Store) ReleaseSold(ctx context.Context, showID int64, orderNo string, seatIDs []string) (int, error) {
	return s.releaseHeld(ctx, showID, orderNo, stateSold, seatIDs,
		fmt.Sprintf("release seats of show %d sold to order %s", showID, orderNo))
}

// ReleaseIfLockedBefore frees one seat only if it is still locked by orderNo
// and was locked before before; it reports whether it freed the seat. The
// check runs inside the script, so a lock taken meanwhile is never touched.
func (s *Store) ReleaseIfLockedBefore(ctx context.Context, showID int64, seatID, orderNo string, before time.Time) (bool, error) {
	if err := checkOrderNo(orderNo); err != nil {
		return false, err
	}
	n, err := s.releaseBefore.Run(ctx, s.rdb, changeKeys(showID), seatID, orderNo, before.UnixMilli()).Int()
	if err != nil {
		return false, wrap(fmt.Sprintf("release stale seat %s of show %d (order %s)", seatID, showID, orderNo), err)
	}
	return n == 1, nil
}

// Holds implements core.SeatStore; the result is sorted by seat id
// (byte-wise string order).
func (s *Store) Holds(ctx context.Context, showID int64) ([]core.SeatHold, error) {
	m, err := s.rdb.HGetAll(ctx, KeySeats(showID)).Result()
	if err != nil {
		return nil, wrap(fmt.Sprintf("read seats of show %d", showID), err)
	}
	holds := make([]core.SeatHold, 0, len(m))
	for seat, v := range m {
		h, err := decode(seat, v)
		if err != nil {
			return nil, fmt.Errorf("seats: read seats of show %d: %w", showID, err)
		}
		holds = append(holds, h)
	}
	slices.SortFunc(holds, func(a, b core.SeatHold) int { return strings.Compare(a.SeatID, b.SeatID) })
	return holds, nil
}

// Replace implements core.SeatStore in one MULTI/EXEC: no script or reader
// sees a half-written show. Locks taken concurrently by Lock are overwritten,
// as the DB (where holds come from) is the truth.
func (s *Store) Replace(ctx context.Context, showID int64, holds []core.SeatHold) error {
	seatArgs := make([]any, 0, 2*len(holds))
	counts := make(map[int64]int)
	seen := make(map[string]bool, len(holds))
	for _, h := range holds {
		if seen[h.SeatID] {
			return core.Invalidf("seat %q appears twice in show %d", h.SeatID, showID)
		}
		seen[h.SeatID] = true
		v, err := encode(h)
		if err != nil {
			return err
		}
		seatArgs = append(seatArgs, h.SeatID, v)
		counts[h.UserID]++
	}
	limitArgs := make([]any, 0, 2*len(counts))
	for user, n := range counts {
		limitArgs = append(limitArgs, strconv.FormatInt(user, 10), n)
	}
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, KeySeats(showID), KeyLimit(showID), KeyBestBounds(showID))
		if len(seatArgs) > 0 {
			p.HSet(ctx, KeySeats(showID), seatArgs...)
			p.HSet(ctx, KeyLimit(showID), limitArgs...)
		}
		return nil
	})
	if err != nil {
		return wrap(fmt.Sprintf("replace seats of show %d", showID), err)
	}
	return nil
}

// Limits returns the show's purchase counters: userID → seats locked or sold.
func (s *Store) Limits(ctx context.Context, showID int64) (map[int64]int, error) {
	m, err := s.rdb.HGetAll(ctx, KeyLimit(showID)).Result()
	if err != nil {
		return nil, wrap(fmt.Sprintf("read purchase counters of show %d", showID), err)
	}
	out := make(map[int64]int, len(m))
	for user, v := range m {
		id, err1 := strconv.ParseInt(user, 10, 64)
		n, err2 := strconv.Atoi(v)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("seats: purchase counter %q=%q of show %d: %w", user, v, showID, err)
		}
		out[id] = n
	}
	return out, nil
}

// SetLimit sets one user's purchase counter; 0 removes it. It is a plain
// write: a Lock or Release running at the same moment can be overwritten.
// Repairs use SetLimitIf; this is for setting a counter on purpose (tests,
// tools).
func (s *Store) SetLimit(ctx context.Context, showID, userID int64, n int) error {
	if n < 0 {
		return core.Invalidf("purchase counter %d is negative", n)
	}
	user := strconv.FormatInt(userID, 10)
	var err error
	if n == 0 {
		err = s.rdb.HDel(ctx, KeyLimit(showID), user).Err()
	} else {
		err = s.rdb.HSet(ctx, KeyLimit(showID), user, n).Err()
	}
	if err != nil {
		return wrap(fmt.Sprintf("set purchase counter of user %d in show %d", userID, showID), err)
	}
	return nil
}

// Ping implements core.SeatStore.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return wrap("ping", err)
	}
	return nil
}

// checkOrderNo rejects order numbers that would break the "|"-separated
// value encoding.
func checkOrderNo(orderNo string) error {
	if orderNo == "" || strings.Contains(orderNo, "|") {
		return core.Invalidf("bad order number %q", orderNo)
	}
	return nil
}

// checkLock validates a Lock's arguments: an order number checkOrderNo
// accepts and 1 to MaxLockSeats distinct seats.
func checkLock(orderNo string, seatIDs []string) error {
	if err := checkOrderNo(orderNo); err != nil {
		return err
	}
	if len(seatIDs) == 0 || len(seatIDs) > MaxLockSeats {
		return core.Invalidf("%d seats to lock, want 1 to %d", len(seatIDs), MaxLockSeats)
	}
	// A repeated seat would be locked once but counted twice.
	seen := make(map[string]bool, len(seatIDs))
	for _, id := range seatIDs {
		if seen[id] {
			return core.Invalidf("seat %q requested twice", id)
		}
		seen[id] = true
	}
	return nil
}

// unavailableReplies are the error replies of a Redis that is failing over
// or starting (a cluster without a master for the slot, a replica not yet
// promoted, a node loading its data): the command did not run, and it will
// work again once the failover is over.
var unavailableReplies = []string{"CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN", "LOADING", "READONLY", "NOREPLICAS", "MOVED", "ASK"}

// wrap adds context to a Redis error. A reply from the server (a script or
// type error) is a plain error, except the failover replies above; anything
// else (refused, timed out, closed) means Redis is out of reach. Both of
// those are classified ErrStoreUnavailable.
func wrap(op string, err error) error {
	var reply redis.Error
	if errors.As(err, &reply) && !isUnavailableReply(reply.Error()) {
		return fmt.Errorf("seats: %s: %w", op, err)
	}
	return &core.Error{Kind: core.KindUnavailable, Code: core.ErrStoreUnavailable.Code,
		Message: "seats: " + op, Err: err}
}

func isUnavailableReply(msg string) bool {
	for _, p := range unavailableReplies {
		if msg == p || strings.HasPrefix(msg, p+" ") {
			return true
		}
	}
	return false
}
