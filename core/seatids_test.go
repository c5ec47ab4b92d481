package core

import (
	"slices"
	"testing"
)

func TestCompareSeatIDs(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"B-10", "B-8", "A-2"}, []string{"A-2", "B-8", "B-10"}},
		{[]string{"AA-1", "Z-1", "B-1"}, []string{"B-1", "Z-1", "AA-1"}}, // shorter row names first
		{[]string{"VIP", "A-1", "B-x"}, []string{"A-1", "B-x", "VIP"}},   // other shapes after, as text
	} {
		got := slices.SortedFunc(slices.Values(tc.in), CompareSeatIDs)
		if !slices.Equal(got, tc.want) {
			t.Errorf("sorted %v = %v, want %v", tc.in, got, tc.want)
		}
	}
}
