package reconcile_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/core/stacktest"
)

// TestApplyOneItem seeds one anomaly per repair a check makes, takes a dry
// run, then applies one of its items alone: the applying run repairs and
// reports that item only, the stores change seat by seat exactly where the
// item said, and the next dry run lists the other items still.
func TestApplyOneItem(t *testing.T) {
	tests := []struct {
		check, action string
		changes       []string // the entries of world that the repair changes
	}{
		{reconcile.CheckExpiredPending, reconcile.ActionCancel, []string{"db A-1", "seat store A-1", "limit of user 1"}},
		{reconcile.CheckPaidNotSold, reconcile.ActionMarkSold, []string{"seat store A-2"}},
		{reconcile.CheckOrphanOrderSeat, reconcile.ActionDelete, []string{"db B-5"}},
		{reconcile.CheckStaleRedisLock, reconcile.ActionRelease, []string{"seat store A-3", "limit of user 3"}},
		{reconcile.CheckStaleRedisLock, reconcile.ActionRelock, []string{"seat store A-4", "limit of user 4"}},
		{reconcile.CheckLimitDrift, reconcile.ActionSetLimit, []string{"limit of user 9"}},
	}
	for _, tt := range tests {
		t.Run(tt.action, func(t *testing.T) {
			stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
				ctx := context.Background()
				f := newFixture(t, st)
				f.seedAnomalies(t)
				before := f.world(t)
				dry, err := f.rec.RunOnce(ctx, reconcile.TriggerManual, true)
				if err != nil {
					t.Fatal(err)
				}
				listed := itemKeys(dry)
				if len(listed) != len(tests) {
					t.Fatalf("the dry run lists %q, want one item per repair (%d)", slices.Sorted(maps.Keys(listed)), len(tests))
				}
				var want reconcile.Item
				for _, c := range dry.Checks {
					for _, it := range c.Items {
						if c.Name == tt.check && it.Action == tt.action {
							want = it
						}
					}
				}
				key := want.Key()

				run, err := f.rec.Apply(ctx, reconcile.TriggerManual, func(check string, it reconcile.Item) bool {
					return check == tt.check && it.Key() == key
				})
				if err != nil {
					t.Fatal(err)
				}
				if run.DryRun || !run.OK() {
					t.Errorf("applying run: dry %t, status %s", run.DryRun, run.Status)
				}
				wantCounts(t, run, map[string][2]int{tt.check: {1, 1}})
				if c, _ := run.Check(tt.check); len(c.Items) != 1 || !sameAnomaly(c.Items[0], want) {
					t.Errorf("the applying run reports %+v, want %s only", c.Items, key)
				}
				if got, want := changed(before, f.world(t)), slices.Sorted(slices.Values(tt.changes)); !slices.Equal(got, want) {
					t.Errorf("applying %s changed %q, want %q", key, got, want)
				}

				again, err := f.rec.RunOnce(ctx, reconcile.TriggerManual, true)
				if err != nil {
					t.Fatal(err)
				}
				delete(listed, key)
				if got := itemKeys(again); !maps.Equal(got, listed) {
					t.Errorf("the next dry run lists %q, want the other items %q",
						slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(listed)))
				}
			})
		})
	}
}

// sameAnomaly reports whether the item a run repaired is the one a dry run
// listed: the same key, except that a repair may have learned its seats.
func sameAnomaly(repaired, listed reconcile.Item) bool {
	if len(listed.SeatIDs) == 0 {
		repaired.SeatIDs = nil
	}
	return repaired.Key() == listed.Key()
}

// TestApplyNeedsItems: Apply without a filter would be a plain run; it is
// refused rather than repairing everything.
func TestApplyNeedsItems(t *testing.T) {
	f := newFixture(t, stacktest.Embedded(t))
	if _, err := f.rec.Apply(context.Background(), reconcile.TriggerManual, nil); core.ErrorKind(err) != core.KindInvalid {
		t.Errorf("Apply(nil) = %v, want invalid", err)
	}
}

func TestItemKey(t *testing.T) {
	tests := []struct {
		it   reconcile.Item
		want string
	}{
		{reconcile.Item{Action: "cancel", OrderNo: "SF1", ShowID: 7, UserID: 3, Detail: "pending 1s past its expiry"},
			"cancel|SF1|7|3|"},
		{reconcile.Item{Action: "mark_sold", OrderNo: "SF2", ShowID: 7, UserID: 3, SeatIDs: []string{"A-1", "A-2"}, Fixed: true},
			"mark_sold|SF2|7|3|A-1,A-2"},
		{reconcile.Item{Action: "set_limit", ShowID: 7, UserID: 9, Error: "boom"}, "set_limit||7|9|"},
	}
	for _, tt := range tests {
		if got := tt.it.Key(); got != tt.want {
			t.Errorf("Key of %+v = %q, want %q", tt.it, got, tt.want)
		}
	}
}

// seedAnomalies leaves in the fixture's show one anomaly for each repair
// reconcile makes, each old enough to be repaired, and two healthy orders:
//
//	A-1 user 1  pending order past its expiry (its timeout message never sent)
//	A-2 user 2  paid order whose seat the seat store still shows locked
//	A-3 user 3  cancelled order whose seat the seat store still shows locked
//	A-4 user 4  pending order whose lock the seat store lost
//	B-5 user 8  order_seat row of an order that does not exist
//	user 9      purchase counter at 4 with no seats
//	C-1, C-2    a fresh pending order and a paid one
func (f *fixture) seedAnomalies(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	f.queue.failSend.Store(true) // no timeout message ends an order behind reconcile's back
	f.place(t, 1, "A-1")
	unsold := f.place(t, 2, "A-2")
	f.seats.failSell.Store(true)
	f.pay(t, unsold)
	f.seats.failSell.Store(false)
	f.seats.failRelease.Store(true)
	f.cancel(t, f.place(t, 3, "A-3"))
	f.seats.failRelease.Store(false)
	db := f.st.DB.X()
	if _, err := db.ExecContext(ctx, db.Rebind(`INSERT INTO order_seat (show_id, seat_id, order_no, user_id, created_at, ticket_code)
 VALUES (?, 'B-5', 'SFGONE', 8, ?, ?)`), f.show.ID, f.clock.Now().UnixMilli(), core.NewSeatCode()); err != nil {
		t.Fatal(err)
	}
	if err := f.st.Seats.SetLimit(ctx, f.show.ID, 9, 4); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(holdTTL)
	lost := f.place(t, 4, "A-4")
	if _, err := f.st.Seats.Release(ctx, f.show.ID, 4, lost.OrderNo, lost.SeatIDs); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(grace + time.Second)
	f.place(t, 10, "C-1")
	f.pay(t, f.place(t, 11, "C-2"))
}

// world is the show's state in both stores, entry by entry: every seat's
// order_seat row with its order's status, every seat the seat store holds,
// every purchase counter.
func (f *fixture) world(t *testing.T) map[string]string {
	t.Helper()
	ctx := context.Background()
	w := make(map[string]string)
	rows, err := f.st.DB.ShowSeatRows(ctx, f.show.ID, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		w["db "+r.SeatID] = fmt.Sprintf("%s %s found=%t", r.OrderNo, r.Status, r.OrderFound)
	}
	holds, err := f.st.Seats.Holds(ctx, f.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range holds {
		w["seat store "+h.SeatID] = fmt.Sprintf("%s %s user %d", h.State, h.OrderNo, h.UserID)
	}
	limits, err := f.st.Seats.Limits(ctx, f.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	for u, n := range limits {
		if n != 0 {
			w[fmt.Sprintf("limit of user %d", u)] = fmt.Sprint(n)
		}
	}
	return w
}

// changed lists the entries that differ between two worlds, sorted.
func changed(before, after map[string]string) []string {
	var out []string
	for k, v := range after {
		if before[k] != v {
			out = append(out, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// itemKeys maps the key of every item of the run to its check.
func itemKeys(run reconcile.Run) map[string]string {
	out := make(map[string]string)
	for _, c := range run.Checks {
		for _, it := range c.Items {
			out[it.Key()] = c.Name
		}
	}
	return out
}
