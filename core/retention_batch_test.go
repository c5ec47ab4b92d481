package core

import (
	"testing"
	"time"
)

func TestBatchSizer(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name  string
		max   int
		took  []time.Duration
		sizes []int // Size() before each Took, then after the last
	}{
		{"starts small and doubles while quick", 1000, []time.Duration{ms, ms, ms, ms}, []int{100, 200, 400, 800, 1000}},
		{"never above max", 50, []time.Duration{ms}, []int{50, 50}},
		{"shrinks in proportion to a slow batch", 1000, []time.Duration{ms, 4 * BatchTarget}, []int{100, 200, 50}},
		{"steady near the target", 1000, []time.Duration{BatchTarget * 3 / 4, BatchTarget}, []int{100, 100, 100}},
		{"a very slow database still deletes ten at a time", 1000, []time.Duration{time.Hour}, []int{100, 10}},
		{"max below the floor", 3, []time.Duration{time.Hour}, []int{3, 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := BatchSizer{Max: tc.max}
			var got []int
			for _, d := range tc.took {
				got = append(got, s.Size())
				s.Took(d)
			}
			got = append(got, s.Size())
			if len(got) != len(tc.sizes) {
				t.Fatalf("sizes %v, want %v", got, tc.sizes)
			}
			for i := range got {
				if got[i] != tc.sizes[i] {
					t.Fatalf("sizes %v, want %v", got, tc.sizes)
				}
			}
		})
	}
}
