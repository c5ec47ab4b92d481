package admission

// The pre-queue draw. Buyers who join before a queue's OpensAt all arrived
// "at once" as far as fairness goes, so their order is drawn, not taken
// from their join times (which favour the fastest network and the most
// scripted client). The rule, all a verifier needs:
//
//	key(entry) = SHA-256(seed || decimal user id)
//	position   = 1 + the entry's rank by key, ascending (ties by Seq)
//
// The seed is 32 random bytes drawn when the queue is enabled; its SHA-256
// is published at once and the seed itself only after the draw, so nobody
// (the operator included) can pick a seed that favours a buyer after seeing
// the joins, and anybody can recompute every position afterwards. Hashing
// each user id with the seed, rather than seeding a PRNG to shuffle the
// join list, leaves nothing to reproduce but SHA-256: no generator, no
// shuffle algorithm. Changing one join (adding, removing or replacing a
// user) changes the order, and an entry's place does not depend on when it
// joined.

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// SeedSize is the length of a shuffle seed in bytes.
const SeedSize = 32

// ErrUnfair is wrapped by every Verify error: the published order is not
// the one the published seed draws.
var ErrUnfair = errors.New("admission: the published queue order does not verify")

// NewSeed draws a shuffle seed.
func NewSeed() ([]byte, error) {
	seed := make([]byte, SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return nil, fmt.Errorf("admission: draw a shuffle seed: %w", err)
	}
	return seed, nil
}

// SeedHash is the hex SHA-256 of seed: what is published before the draw.
func SeedHash(seed []byte) string {
	h := sha256.Sum256(seed)
	return hex.EncodeToString(h[:])
}

// drawKey is the key an entry is ranked by.
func drawKey(seed []byte, user int64) [sha256.Size]byte {
	h := sha256.New()
	h.Write(seed)
	h.Write(strconv.AppendInt(nil, user, 10))
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// DrawOrder returns the drawn position of each pre-queue entry (the
// result's i-th is pre[i]'s), 1 to len(pre).
func DrawOrder(seed []byte, pre []Entry) []int64 {
	keys := make([][sha256.Size]byte, len(pre))
	order := make([]int, len(pre))
	for i, e := range pre {
		keys[i] = drawKey(seed, e.User)
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := bytes.Compare(keys[a][:], keys[b][:]); c != 0 {
			return c
		}
		return cmp.Compare(pre[a].Seq, pre[b].Seq)
	})
	pos := make([]int64, len(pre))
	for rank, i := range order {
		pos[i] = int64(rank) + 1
	}
	return pos
}

// Verify checks a published queue: that seedHex hashes to seedHashHex, that
// the pre-queue entries are Seq 1 to their count, that every pre-queue
// position is the one the seed draws and every later one is its Seq.
// positions[i] is entries[i]'s. The error (wrapping ErrUnfair) names the
// first entry, in the order given, that does not verify.
func Verify(seedHex, seedHashHex string, entries []Entry, positions []int64) error {
	seed, err := hex.DecodeString(seedHex)
	if err != nil {
		return fmt.Errorf("%w: the seed %q is not hex: %v", ErrUnfair, seedHex, err)
	}
	if got := SeedHash(seed); got != strings.ToLower(seedHashHex) {
		return fmt.Errorf("%w: the seed hashes to %s, the published hash is %s", ErrUnfair, got, seedHashHex)
	}
	if len(entries) != len(positions) {
		return fmt.Errorf("%w: %d entries but %d positions", ErrUnfair, len(entries), len(positions))
	}
	var pre []Entry
	for _, e := range entries {
		if e.Pre {
			pre = append(pre, e)
		}
	}
	drawn := DrawOrder(seed, pre)
	j := 0
	for i, e := range entries {
		want := e.Seq
		if e.Pre {
			if e.Seq < 1 || e.Seq > int64(len(pre)) {
				return fmt.Errorf("%w: user %d joined the pre-queue as number %d, outside 1 to %d",
					ErrUnfair, e.User, e.Seq, len(pre))
			}
			want = drawn[j]
			j++
		}
		if positions[i] != want {
			kind := "joined after opening as number"
			if e.Pre {
				kind = "in the pre-queue, drawn at"
			}
			return fmt.Errorf("%w: user %d (join %d) is published at position %d but %s %d",
				ErrUnfair, e.User, e.Seq, positions[i], kind, want)
		}
	}
	return nil
}

// RankCorrelation is Spearman's rank correlation of x and y (the Pearson
// correlation of their ranks, ties sharing the mean rank): about 0 when
// admission order ignores arrival order, 1 when it follows it. It is 0 for
// fewer than two pairs or a constant series, where no order exists.
func RankCorrelation(x, y []float64) float64 {
	n := min(len(x), len(y))
	if n < 2 {
		return 0
	}
	rx, ry := ranks(x[:n]), ranks(y[:n])
	mean := float64(n+1) / 2
	var sxy, sxx, syy float64
	for i := range n {
		dx, dy := rx[i]-mean, ry[i]-mean
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

// ranks gives each value its 1-based rank, tied values their mean rank.
func ranks(v []float64) []float64 {
	order := make([]int, len(v))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(v[a], v[b]) })
	r := make([]float64, len(v))
	for i := 0; i < len(order); {
		j := i
		for j+1 < len(order) && v[order[j+1]] == v[order[i]] {
			j++
		}
		mean := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[order[k]] = mean
		}
		i = j + 1
	}
	return r
}
