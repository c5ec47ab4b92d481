package admission

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
)

// BenchmarkMemoryJoin: joins of distinct users to one show from every
// core at once, the embedded stack's side of a 100,000-join rush.
func BenchmarkMemoryJoin(b *testing.B) {
	st := NewMemory()
	configure(b, st, 1, Settings{Enabled: true})
	var user atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			u := user.Add(1)
			if _, _, err := st.Join(context.Background(), 1, u, "ticket", t0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDrawOrder: the pre-queue draw, which Shuffle runs once.
func BenchmarkDrawOrder(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			pre := make([]Entry, n)
			for i := range pre {
				pre[i] = Entry{User: int64(i) * 7919, Seq: int64(i) + 1, Pre: true}
			}
			for b.Loop() {
				DrawOrder(goldenSeed, pre)
			}
		})
	}
}
