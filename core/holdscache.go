package core

import (
	"sync"
	"time"
)

// holdsSeen spares the holds cap (checkClientHolds) its count query on
// most placements: an address's count, once read, is carried forward by
// the placements let through since, each counted as a hold whether or not
// it then got its seats. Endings only lower the true count, so while the
// carried count is below the cap a fresh read would be below it too, and
// the placement passes without one; at the cap the count is read again,
// so every refusal still comes from the database. On one instance the cap
// is thus exactly the same; with several, placements on the others within
// holdsSeenFor of a read are not carried, so an address spreading its
// requests over n instances may get up to n times the cap before every
// instance has read a count at the cap again.
const (
	holdsSeenFor     = time.Second
	holdsSeenPruneAt = 10_000 // entries past which expired ones are swept
)

type holdsSeen struct {
	mu      sync.Mutex
	byKey   map[holdsKey]holdsCount
	pruneAt int
}

type holdsKey struct {
	show   int64
	client string
}

type holdsCount struct {
	n    int       // read at `read`, plus the placements let through since
	read time.Time // when the database was asked
}

// pass counts one more placement and reports true when the carried count
// shows the address below limit: no need to read it.
func (h *holdsSeen) pass(k holdsKey, limit int, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.byKey[k]
	if !ok || now.Sub(c.read) >= holdsSeenFor || c.n >= limit {
		return false
	}
	c.n++
	h.byKey[k] = c
	return true
}

// read records a count just read from the database, with the placement
// it lets through when it is below limit.
func (h *holdsSeen) read(k holdsKey, n, limit int, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n >= limit {
		delete(h.byKey, k) // refused: the next placement reads again anyway
		return
	}
	if h.byKey == nil {
		h.byKey, h.pruneAt = map[holdsKey]holdsCount{}, holdsSeenPruneAt
	}
	if len(h.byKey) >= h.pruneAt {
		for k, c := range h.byKey {
			if now.Sub(c.read) >= holdsSeenFor {
				delete(h.byKey, k)
			}
		}
		h.pruneAt = max(holdsSeenPruneAt, 2*len(h.byKey))
	}
	h.byKey[k] = holdsCount{n: n + 1, read: now}
}
