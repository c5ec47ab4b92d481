package admission

import (
	"context"
	"encoding/hex"
	"maps"
	"slices"
	"sync"
	"time"
)

var _ Store = (*Memory)(nil)

// Memory is the waiting rooms of the embedded stack, held in this process:
// the Redis store's rules (redis.go and its scripts) in plain Go. Each
// show has a mutex of its own, held for the whole of one method's change,
// as a script is atomic. It is safe for concurrent use.
type Memory struct {
	mu    sync.RWMutex
	shows map[int64]*memQueue
}

// memQueue is one show's queue.
type memQueue struct {
	mu       sync.Mutex
	gone     bool // deleted by Delete: look the show up again
	settings Settings
	seed     []byte
	entries  []Entry         // by Seq: entries[i].Seq == i+1
	byUser   map[int64]int64 // user → Seq
	drawn    map[int64]int64 // pre-queue user → position, once shuffled
	closed   bool            // no more pre-queue joins
	shuffled bool
	preN     int64
	head     int64
	admitted map[int64]time.Time
	placed   map[int64]bool
	claims   map[int64]placementClaim
}

// NewMemory returns an empty in-process queue store.
func NewMemory() *Memory { return &Memory{shows: make(map[int64]*memQueue)} }

// lockShow returns the show's queue locked, creating it when create is set;
// nil (nothing locked) when it does not exist and create is not set. A
// queue deleted while the caller waited for its lock is looked up again.
func (m *Memory) lockShow(show int64, create bool) *memQueue {
	for {
		m.mu.RLock()
		q := m.shows[show]
		m.mu.RUnlock()
		if q == nil {
			if !create {
				return nil
			}
			m.mu.Lock()
			if q = m.shows[show]; q == nil {
				q = &memQueue{byUser: make(map[int64]int64), admitted: make(map[int64]time.Time),
					placed: make(map[int64]bool), claims: make(map[int64]placementClaim)}
				m.shows[show] = q
			}
			m.mu.Unlock()
		}
		q.mu.Lock()
		if !q.gone {
			return q
		}
		q.mu.Unlock()
	}
}

// Configure implements Store.
func (m *Memory) Configure(ctx context.Context, show int64, s Settings) (Status, error) {
	s = normalize(s)
	var seed []byte
	if s.Enabled && !s.OpensAt.IsZero() {
		// Drawn before taking the lock: thrown away when one exists.
		var err error
		if seed, err = NewSeed(); err != nil {
			return Status{}, err
		}
	}
	q := m.lockShow(show, true)
	defer q.mu.Unlock()
	s.SeedHash, s.Seed = q.settings.SeedHash, q.settings.Seed
	q.settings = s
	if seed != nil && q.seed == nil {
		q.seed = seed
		q.settings.SeedHash = SeedHash(seed)
	}
	return q.status(), nil
}

// normalize gives unset settings their defaults, the same in every store.
func normalize(s Settings) Settings {
	if s.Mode == "" {
		s.Mode = ModeAlways
	}
	if s.Window == 0 {
		s.Window = DefaultWindow
	}
	if !s.OpensAt.IsZero() {
		s.OpensAt = time.UnixMilli(s.OpensAt.UnixMilli()).UTC()
	}
	s.SeedHash, s.Seed = "", ""
	return s
}

func (q *memQueue) status() Status {
	return Status{Settings: q.settings, Joined: int64(len(q.entries)), PreJoined: q.preN,
		Shuffled: q.shuffled, Admitted: q.head, Placed: int64(len(q.placed))}
}

// Status implements Store.
func (m *Memory) Status(ctx context.Context, show int64) (Status, error) {
	q := m.lockShow(show, false)
	if q == nil {
		return Status{}, ErrNoQueue
	}
	defer q.mu.Unlock()
	return q.status(), nil
}

// Join implements Store.
func (m *Memory) Join(ctx context.Context, show, user int64, ticket string, now time.Time) (Entry, bool, error) {
	q := m.lockShow(show, false)
	if q == nil {
		return Entry{}, false, ErrNoQueue
	}
	defer q.mu.Unlock()
	if !q.settings.Enabled {
		return Entry{}, false, ErrNoQueue
	}
	if seq, ok := q.byUser[user]; ok {
		return q.entries[seq-1], false, nil
	}
	now = time.UnixMilli(now.UnixMilli()).UTC()
	pre := !q.closed && now.Before(q.settings.OpensAt)
	if pre {
		q.preN++
	} else {
		q.closed = true
	}
	e := Entry{Show: show, User: user, Seq: int64(len(q.entries)) + 1, Pre: pre, JoinedAt: now, Ticket: ticket}
	q.entries = append(q.entries, e)
	q.byUser[user] = e.Seq
	return e, true, nil
}

// Position implements Store.
func (m *Memory) Position(ctx context.Context, e Entry) (int64, error) {
	if !e.Pre {
		return e.Seq, nil
	}
	q := m.lockShow(e.Show, false)
	if q == nil {
		return 0, ErrNoQueue
	}
	defer q.mu.Unlock()
	return q.drawn[e.User], nil
}

// Shuffle implements Store. The draw runs with the show locked: once per
// queue, some milliseconds for a pre-queue of 100,000.
func (m *Memory) Shuffle(ctx context.Context, show int64, now time.Time) (bool, error) {
	q := m.lockShow(show, false)
	if q == nil {
		return false, ErrNoQueue
	}
	defer q.mu.Unlock()
	if q.shuffled || q.seed == nil || now.Before(q.settings.OpensAt) {
		return false, nil
	}
	q.closed = true
	pre := q.entries[:q.preN]
	pos := DrawOrder(q.seed, pre)
	q.drawn = make(map[int64]int64, len(pre))
	for i, e := range pre {
		q.drawn[e.User] = pos[i]
	}
	q.shuffled = true
	q.settings.Seed = hex.EncodeToString(q.seed)
	return true, nil
}

// Advance implements Store. A paused or disabled queue does not advance.
func (m *Memory) Advance(ctx context.Context, show int64, n int64) (int64, error) {
	q := m.lockShow(show, false)
	if q == nil {
		return 0, ErrNoQueue
	}
	defer q.mu.Unlock()
	if n > 0 && q.settings.Enabled && !q.settings.Paused && (q.preN == 0 || q.shuffled) {
		q.head = min(q.head+n, int64(len(q.entries)))
	}
	return q.head, nil
}

// AdmittedAt implements Store.
func (m *Memory) AdmittedAt(ctx context.Context, show, user int64, now time.Time) (time.Time, error) {
	q := m.lockShow(show, false)
	if q == nil {
		return time.Time{}, ErrNoQueue
	}
	defer q.mu.Unlock()
	at, ok := q.admitted[user]
	if !ok {
		at = time.UnixMilli(now.UnixMilli()).UTC()
		q.admitted[user] = at
	}
	return at, nil
}

// placementClaim is one placement's hold on a user's admission.
type placementClaim struct {
	holder string
	until  time.Time
}

// ClaimPlacement implements Store.
func (m *Memory) ClaimPlacement(ctx context.Context, show, user int64, holder string, until, now time.Time) (Claim, error) {
	q := m.lockShow(show, false)
	if q == nil {
		return 0, ErrNoQueue
	}
	defer q.mu.Unlock()
	if q.placed[user] {
		return ClaimUsed, nil
	}
	if c, ok := q.claims[user]; ok && c.holder != holder && c.until.After(now) {
		return ClaimBusy, nil
	}
	q.claims[user] = placementClaim{holder: holder, until: until}
	return ClaimTaken, nil
}

// EndPlacement implements Store.
func (m *Memory) EndPlacement(ctx context.Context, show, user int64, holder string, placed bool) (bool, error) {
	q := m.lockShow(show, false)
	if q == nil {
		return false, ErrNoQueue
	}
	defer q.mu.Unlock()
	if c, ok := q.claims[user]; ok && (placed || c.holder == holder) {
		delete(q.claims, user)
	}
	if !placed || q.placed[user] {
		return false, nil
	}
	q.placed[user] = true
	return true, nil
}

// Entries implements Store.
func (m *Memory) Entries(ctx context.Context, show int64) ([]Entry, []int64, error) {
	q := m.lockShow(show, false)
	if q == nil {
		return nil, nil, ErrNoQueue
	}
	defer q.mu.Unlock()
	pos := make([]int64, len(q.entries))
	for i, e := range q.entries {
		pos[i] = e.Seq
		if e.Pre {
			pos[i] = q.drawn[e.User]
		}
	}
	return slices.Clone(q.entries), pos, nil
}

// Shows implements Store.
func (m *Memory) Shows(ctx context.Context) ([]int64, error) {
	m.mu.RLock()
	ids := slices.Sorted(maps.Keys(m.shows))
	m.mu.RUnlock()
	var on []int64
	for _, id := range ids {
		if q := m.lockShow(id, false); q != nil {
			if q.settings.Enabled {
				on = append(on, id)
			}
			q.mu.Unlock()
		}
	}
	return on, nil
}

// Delete removes a show's queue (retention, with its seat keys); deleting
// one that is gone is not an error.
func (m *Memory) Delete(ctx context.Context, show int64) error {
	m.mu.Lock()
	q := m.shows[show]
	delete(m.shows, show)
	m.mu.Unlock()
	if q != nil {
		q.mu.Lock()
		q.gone = true
		q.mu.Unlock()
	}
	return nil
}
