package bench

import (
	"math/rand/v2"
	"sync"
)

// seatPool is the clients' shared idea of which seats are still free, like
// a seat map they refresh: picks do not remove seats, so concurrent clients
// can pick the same seat and conflict, as real buyers do; a seat leaves the
// pool once it is known to be taken (placed, or reported by a 409).
type seatPool struct {
	mu  sync.Mutex
	ids []string
	at  map[string]int // seat id → index in ids
}

func newSeatPool(ids []string) *seatPool {
	p := &seatPool{ids: append([]string(nil), ids...), at: make(map[string]int, len(ids))}
	for i, id := range p.ids {
		p.at[id] = i
	}
	return p
}

// pick returns up to k distinct random seats of the pool (fewer when the
// pool is smaller; none when it is empty).
func (p *seatPool) pick(k int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	k = min(k, len(p.ids))
	out := make([]string, 0, k)
	seen := make(map[int]bool, k)
	for len(out) < k {
		i := rand.IntN(len(p.ids))
		if !seen[i] {
			seen[i] = true
			out = append(out, p.ids[i])
		}
	}
	return out
}

// remove takes seats out of the pool; unknown or already removed ids are ignored.
func (p *seatPool) remove(ids []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range ids {
		i, ok := p.at[id]
		if !ok {
			continue
		}
		last := len(p.ids) - 1
		p.ids[i] = p.ids[last]
		p.at[p.ids[i]] = i
		p.ids = p.ids[:last]
		delete(p.at, id)
	}
}

// size is the number of seats left.
func (p *seatPool) size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ids)
}
