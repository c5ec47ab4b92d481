package seats

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"seatflow/core"
)

func TestSetLimitIf(t *testing.T) {
	tests := []struct {
		name      string
		user      int64
		expected  int
		n         int
		wantWrote bool
		wantErr   error
		want      map[int64]int
	}{
		{name: "counter as expected", user: 1, expected: 1, n: 3, wantWrote: true, want: map[int64]int{1: 3, 2: 1}},
		{name: "zero removes", user: 1, expected: 1, n: 0, wantWrote: true, want: map[int64]int{2: 1}},
		{name: "counter moved", user: 1, expected: 2, n: 5, want: map[int64]int{1: 1, 2: 1}},
		{name: "missing counter is 0", user: 3, expected: 0, n: 2, wantWrote: true, want: map[int64]int{1: 1, 2: 1, 3: 2}},
		{name: "missing counter is not 1", user: 3, expected: 1, n: 2, want: map[int64]int{1: 1, 2: 1}},
		{name: "negative rejected", user: 1, expected: 1, n: -1, wantErr: core.ErrInvalid, want: map[int64]int{1: 1, 2: 1}},
	}
	eachStore(t, func(t *testing.T, s *subject) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				show := s.newShow(t)
				given(t, s, show, []step{{order: "o1", user: 1, seats: []string{"a"}}, {order: "o2", user: 2, seats: []string{"b"}}})
				wrote, err := s.SetLimitIf(context.Background(), show, tt.user, tt.expected, tt.n)
				if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
					t.Fatalf("SetLimitIf error %v, want %v", err, tt.wantErr)
				}
				if wrote != tt.wantWrote {
					t.Errorf("SetLimitIf wrote %v, want %v", wrote, tt.wantWrote)
				}
				got, err := s.Limits(context.Background(), show)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("limits %v, want %v", got, tt.want)
				}
			})
		}
	})
}
