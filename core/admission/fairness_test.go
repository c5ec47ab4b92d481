package admission

import (
	"encoding/hex"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// goldenSeed is bytes 0..31; the positions below were computed outside Go
// (Python hashlib) from the documented rule alone.
var goldenSeed = func() []byte {
	b := make([]byte, SeedSize)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}()

const goldenSeedHash = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"

func preEntries(users ...int64) []Entry {
	es := make([]Entry, len(users))
	for i, u := range users {
		es[i] = Entry{Show: 1, User: u, Seq: int64(i) + 1, Pre: true}
	}
	return es
}

func TestDrawOrderGolden(t *testing.T) {
	if got := SeedHash(goldenSeed); got != goldenSeedHash {
		t.Errorf("seed hash %s, want %s", got, goldenSeedHash)
	}
	got := DrawOrder(goldenSeed, preEntries(42, 7, 1000000, 3, 99))
	if want := []int64{2, 3, 1, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("positions %v, want %v", got, want)
	}
}

func TestDrawOrder(t *testing.T) {
	users := make([]int64, 1000)
	for i := range users {
		users[i] = int64(i)*7919 + 1
	}
	pos := DrawOrder(goldenSeed, preEntries(users...))
	if !isPermutation(pos) {
		t.Fatal("positions are not 1 to n")
	}
	// A user's draw does not depend on when it joined: the same users
	// joined in reverse order get the same positions.
	rev := slices.Clone(users)
	slices.Reverse(rev)
	rpos := DrawOrder(goldenSeed, preEntries(rev...))
	for i := range users {
		if pos[i] != rpos[len(users)-1-i] {
			t.Fatalf("user %d: position %d, joined last %d", users[i], pos[i], rpos[len(users)-1-i])
		}
	}
	// Another seed draws another order.
	other := slices.Clone(goldenSeed)
	other[0] ^= 1
	if slices.Equal(pos, DrawOrder(other, preEntries(users...))) {
		t.Error("two seeds drew the same order")
	}
	// The drawn order ignores arrival: rank correlation near 0.
	arrival, drawn := make([]float64, len(pos)), make([]float64, len(pos))
	for i, p := range pos {
		arrival[i], drawn[i] = float64(i), float64(p)
	}
	if r := RankCorrelation(arrival, drawn); math.Abs(r) > 0.1 {
		t.Errorf("rank correlation of arrival and draw %.3f, want about 0", r)
	}
	// Equal keys (the same user twice, which no store allows) fall back on Seq.
	if got := DrawOrder(goldenSeed, preEntries(5, 5)); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("tie: %v, want by seq", got)
	}
}

func TestNewSeed(t *testing.T) {
	a, err := NewSeed()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewSeed()
	if len(a) != SeedSize || slices.Equal(a, b) {
		t.Errorf("seeds %x and %x", a, b)
	}
}

func TestVerify(t *testing.T) {
	seed := hex.EncodeToString(goldenSeed)
	// Five pre-queue joins (drawn 2 3 1 4 5), then two after opening.
	base := append(preEntries(42, 7, 1000000, 3, 99),
		Entry{Show: 1, User: 500, Seq: 6}, Entry{Show: 1, User: 501, Seq: 7})
	basePos := []int64{2, 3, 1, 4, 5, 6, 7}
	cases := []struct {
		name     string
		seed     string
		hash     string
		edit     func(es []Entry, pos []int64) ([]Entry, []int64)
		wantErr  bool
		wantText string // in the error, when set
	}{
		{name: "published order", seed: seed, hash: goldenSeedHash},
		{name: "hash in capitals", seed: seed, hash: strings.ToUpper(goldenSeedHash)},
		{name: "seed not hex", seed: "zz", hash: goldenSeedHash, wantErr: true, wantText: "not hex"},
		{name: "another seed", seed: seed[:62] + "00", hash: goldenSeedHash, wantErr: true, wantText: "published hash"},
		{name: "two pre-queue places swapped", seed: seed, hash: goldenSeedHash,
			edit:    func(es []Entry, p []int64) ([]Entry, []int64) { p[0], p[1] = p[1], p[0]; return es, p },
			wantErr: true, wantText: "user 42 (join 1) is published at position 3 but in the pre-queue, drawn at 2"},
		{name: "a late joiner moved up", seed: seed, hash: goldenSeedHash,
			edit:    func(es []Entry, p []int64) ([]Entry, []int64) { p[6] = 6; return es, p },
			wantErr: true, wantText: "user 501 (join 7) is published at position 6 but joined after opening as number 7"},
		{name: "one join replaced", seed: seed, hash: goldenSeedHash,
			edit:    func(es []Entry, p []int64) ([]Entry, []int64) { es[2].User = 1000001; return es, p },
			wantErr: true},
		{name: "one join removed", seed: seed, hash: goldenSeedHash,
			edit: func(es []Entry, p []int64) ([]Entry, []int64) {
				es = slices.Delete(es, 2, 3)
				for i := range es {
					es[i].Seq = int64(i) + 1
				}
				return es, slices.Delete(p, 2, 3)
			},
			wantErr: true},
		{name: "a pre-queue entry out of the first joins", seed: seed, hash: goldenSeedHash,
			edit:    func(es []Entry, p []int64) ([]Entry, []int64) { es[0].Seq = 9; return es, p },
			wantErr: true, wantText: "number 9, outside 1 to 5"},
		{name: "positions missing", seed: seed, hash: goldenSeedHash,
			edit:    func(es []Entry, p []int64) ([]Entry, []int64) { return es, p[:6] },
			wantErr: true, wantText: "7 entries but 6 positions"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			es, pos := slices.Clone(base), slices.Clone(basePos)
			if c.edit != nil {
				es, pos = c.edit(es, pos)
			}
			err := Verify(c.seed, c.hash, es, pos)
			switch {
			case !c.wantErr && err != nil:
				t.Errorf("Verify: %v", err)
			case c.wantErr && !errors.Is(err, ErrUnfair):
				t.Errorf("Verify: %v, want ErrUnfair", err)
			case c.wantErr && !strings.Contains(err.Error(), c.wantText):
				t.Errorf("Verify: %v, want it to say %q", err, c.wantText)
			}
		})
	}
}

func TestRankCorrelation(t *testing.T) {
	cases := []struct {
		name string
		x, y []float64
		want float64
	}{
		{"same order", []float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1},
		{"reversed", []float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		{"monotone, not linear", []float64{1, 2, 3, 4}, []float64{1, 8, 27, 1000}, 1},
		{"ties share their rank", []float64{1, 2, 3, 4, 5}, []float64{5, 6, 7, 8, 7}, 8 / math.Sqrt(95)},
		{"one pair", []float64{1}, []float64{1}, 0},
		{"constant", []float64{1, 2, 3}, []float64{7, 7, 7}, 0},
		{"lengths differ: the shorter counts", []float64{1, 2, 3}, []float64{1, 2, 3, 0}, 1},
	}
	for _, c := range cases {
		if got := RankCorrelation(c.x, c.y); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
