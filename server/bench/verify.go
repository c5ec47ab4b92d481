package bench

import (
	"context"
	"fmt"
	"strings"

	"seatflow/core"
)

// seatCheck is the invariant check of DESIGN.md over some shows: no seat
// has two order_seat rows, no seat is in two paid orders, and every seat's
// state in the seat store (as the API shows it) equals the state the DB implies.
type seatCheck struct {
	Seats          int      `json:"seats"`
	Taken          int      `json:"taken"`            // seats with an order_seat row
	DoubleOrderRow int      `json:"double_order_row"` // seats with two order_seat rows
	DoubleSold     int      `json:"double_sold"`      // seats in two paid orders
	Mismatch       int      `json:"redis_db_mismatch"`
	Examples       []string `json:"examples,omitempty"`
}

func (c seatCheck) ok() bool { return c.DoubleOrderRow == 0 && c.DoubleSold == 0 && c.Mismatch == 0 }

// maxExamples bounds the mismatches quoted in the report.
const maxExamples = 5

// checkSeats runs the check on the given shows, through the bench's own
// database connection and the server's seat API.
func checkSeats(ctx context.Context, s *stack, showIDs []int64) (seatCheck, error) {
	var c seatCheck
	x := s.db.X()
	for _, id := range showIDs {
		var dup int
		if err := x.GetContext(ctx, &dup, `SELECT COUNT(*) FROM (SELECT seat_id FROM order_seat
 WHERE show_id = ? GROUP BY seat_id HAVING COUNT(*) > 1) d`, id); err != nil {
			return c, fmt.Errorf("check show %d: duplicate order_seat rows: %w", id, err)
		}
		c.DoubleOrderRow += dup

		var paid []string
		if err := x.SelectContext(ctx, &paid, `SELECT seat_ids FROM order_info WHERE show_id = ? AND status = ?`,
			id, int(core.StatusPaid)); err != nil {
			return c, fmt.Errorf("check show %d: paid orders: %w", id, err)
		}
		c.DoubleSold += doubleSold(paid)

		taken, err := s.db.TakenSeats(ctx, id)
		if err != nil {
			return c, fmt.Errorf("check show %d: %w", id, err)
		}
		want := make(map[string]string, len(taken))
		for _, h := range taken {
			want[h.SeatID] = h.State.String()
		}
		got, err := s.api.seatStates(ctx, id)
		if err != nil {
			return c, fmt.Errorf("check show %d: seat API: %w", id, err)
		}
		c.Seats += len(got)
		c.Taken += len(taken)
		for seat, state := range got {
			w := want[seat]
			if w == "" {
				w = core.SeatAvailable.String()
			}
			if state != w {
				c.Mismatch++
				if len(c.Examples) < maxExamples {
					c.Examples = append(c.Examples, fmt.Sprintf("show %d seat %s: redis %s, db %s", id, seat, state, w))
				}
			}
		}
	}
	return c, nil
}

// doubleSold counts seats named by more than one of the paid orders' seat
// lists (order_info.seat_ids, comma-separated).
func doubleSold(seatLists []string) int {
	seen := map[string]int{}
	n := 0
	for _, l := range seatLists {
		for seat := range strings.SplitSeq(l, ",") {
			if seen[seat]++; seen[seat] == 2 {
				n++
			}
		}
	}
	return n
}
