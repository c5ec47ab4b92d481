package clustertest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"seatflow/core"
	"seatflow/core/reconcile"
)

// checkInvariants asserts DESIGN.md's invariants on a quiet stack after a
// reconcile run that started at runStart, and cross-checks what the load
// was told against what the database holds.
func (s *stack) checkInvariants(runStart time.Time, tl *tally) {
	t := s.t
	t.Helper()
	ctx := t.Context()

	// Seat by seat: Redis equals the DB-derived state, every order_seat row
	// belongs to a live order, no seat is sold to two paid orders, every
	// seat of a paid order is its own, counters match, nothing pending
	// past the run's start.
	if err := reconcile.CheckInvariants(ctx, s.db, s.seats, runStart); err != nil {
		t.Errorf("after reconcile: %v", err)
	}

	rows := func(what, query string, args ...any) []string {
		t.Helper()
		var out []string
		if err := s.db.X().SelectContext(ctx, &out, query, args...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(out) > 0 {
			t.Errorf("%s: %d, e.g. %s", what, len(out), strings.Join(out[:min(len(out), 5)], ", "))
		}
		return out
	}
	// UNIQUE(show_id, seat_id) makes this structural; it is checked anyway,
	// so a schema change that loses the key cannot go unnoticed.
	rows("seats with two order_seat rows", `SELECT CONCAT(show_id, '/', seat_id) FROM order_seat
 GROUP BY show_id, seat_id HAVING COUNT(*) > 1`)

	// A timeout message delivered again (a killed consumer's uncommitted
	// offsets, the broker's at-least-once) must change nothing: one ending
	// per order at most, and never both.
	rows("orders cancelled twice", `SELECT order_no FROM order_event WHERE kind = ? GROUP BY order_no HAVING COUNT(*) > 1`,
		core.EventCancelled)
	rows("orders paid twice", `SELECT order_no FROM order_event WHERE kind = ? GROUP BY order_no HAVING COUNT(*) > 1`,
		core.EventPaid)
	rows("orders both paid and cancelled", `SELECT p.order_no FROM order_event p JOIN order_event c
 ON c.order_no = p.order_no AND c.kind = ? WHERE p.kind = ?`, core.EventCancelled, core.EventPaid)
	rows("orders whose timeout cancelled twice", `SELECT order_no FROM order_event WHERE kind = ? AND detail LIKE ?
 GROUP BY order_no HAVING COUNT(*) > 1`, core.EventTimeoutFired, `%"outcome":"cancelled"%`)
	rows("orders whose status disagrees with their events", `SELECT o.order_no FROM order_info o WHERE
 (o.status = 1) <> EXISTS (SELECT 1 FROM order_event e WHERE e.order_no = o.order_no AND e.kind = ?) OR
 (o.status = 2) <> EXISTS (SELECT 1 FROM order_event e WHERE e.order_no = o.order_no AND e.kind = ?)`,
		core.EventPaid, core.EventCancelled)

	// Every payment is applied to exactly one order, or recorded as a
	// discrepancy; a repeated txn_id adds no row (UNIQUE) and is a
	// payment_duplicate event.
	rows("payments with no known outcome", `SELECT txn_id FROM payment WHERE result NOT IN (?, ?, ?)`,
		core.PaymentApplied, core.PaymentDiscrepancy, "amount_mismatch")
	rows("paid orders without their applied payment", `SELECT o.order_no FROM order_info o WHERE o.status = 1 AND
 (SELECT COUNT(*) FROM payment p WHERE p.order_no = o.order_no AND p.result = ? AND p.txn_id = o.paid_txn_id) <> 1`,
		core.PaymentApplied)
	rows("applied payments of orders not paid by them", `SELECT p.txn_id FROM payment p LEFT JOIN order_info o
 ON o.order_no = p.order_no WHERE p.result = ? AND (o.status IS NULL OR o.status <> 1 OR o.paid_txn_id <> p.txn_id)`,
		core.PaymentApplied)
	rows("discrepant payments without a discrepancy", `SELECT p.txn_id FROM payment p WHERE p.result = ? AND NOT EXISTS
 (SELECT 1 FROM discrepancy d WHERE d.txn_id = p.txn_id)`, core.PaymentDiscrepancy)

	// What the clients were told is what the database says.
	tl.mu.Lock()
	orders, payments := slices.Clone(tl.orders), slices.Clone(tl.payments)
	tl.mu.Unlock()
	var known []string
	if err := s.db.X().SelectContext(ctx, &known, `SELECT order_no FROM order_info`); err != nil {
		t.Fatal(err)
	}
	slices.Sort(known)
	for _, o := range orders {
		if _, ok := slices.BinarySearch(known, o.orderNo); !ok {
			t.Errorf("order %s was accepted (201) but is not in the database", o.orderNo)
		}
	}
	type payRow struct {
		TxnID   string `db:"txn_id"`
		OrderNo string `db:"order_no"`
		Result  string `db:"result"`
	}
	var pays []payRow
	if err := s.db.X().SelectContext(ctx, &pays, `SELECT txn_id, order_no, result FROM payment`); err != nil {
		t.Fatal(err)
	}
	byTxn := map[string]payRow{}
	for _, p := range pays {
		byTxn[p.TxnID] = p
	}
	for _, p := range payments {
		row, ok := byTxn[p.txnID]
		switch {
		case !ok:
			t.Errorf("payment %s answered %s but has no row", p.txnID, p.result)
		case row.OrderNo != p.orderNo:
			t.Errorf("payment %s recorded for %s, sent for %s", p.txnID, row.OrderNo, p.orderNo)
		case p.result != string(core.PaymentDuplicate) && p.result != row.Result:
			t.Errorf("payment %s answered %s, recorded %s", p.txnID, p.result, row.Result)
		}
	}
}

// latenessReport prints how late every expired order was ended, per
// path (reason/actor: the timeout chain, the sweep, a full reconcile),
// and fails for an order ended before its expiry or later than bound.
func (s *stack) latenessReport(bound time.Duration) {
	t := s.t
	t.Helper()
	var rs []struct {
		OrderNo  string `db:"order_no"`
		ExpireAt int64  `db:"expire_at"`
		ClosedAt int64  `db:"closed_at"`
		Reason   string `db:"cancel_reason"`
		Actor    string `db:"cancel_actor"`
	}
	if err := s.db.X().SelectContext(t.Context(), &rs, `SELECT order_no, expire_at, closed_at, cancel_reason, cancel_actor
 FROM order_info WHERE status = 2 AND cancel_reason IN (?, ?)`, core.ReasonTimeout, core.ReasonReconcile); err != nil {
		t.Fatal(err)
	}
	byPath := map[string][]time.Duration{}
	var all []time.Duration
	for _, r := range rs {
		late := time.Duration(r.ClosedAt-r.ExpireAt) * time.Millisecond
		path := r.Reason + "/" + r.Actor
		byPath[path] = append(byPath[path], late)
		all = append(all, late)
		if late < 0 {
			t.Errorf("order %s ended by %s %v before its expiry", r.OrderNo, path, -late)
		}
		if late > bound {
			t.Errorf("order %s ended by %s %v after its expiry (bound %v)", r.OrderNo, path, late, bound)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cancel lateness of %d expired orders: %s\n", len(all), summary(all))
	for _, p := range slices.Sorted(maps.Keys(byPath)) {
		fmt.Fprintf(&b, "  %-22s %4d orders: %s\n", p, len(byPath[p]), summary(byPath[p]))
	}
	t.Log(b.String())
}

// summary is "p50 … p99 … max …" of ds.
func summary(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	at := func(q int) time.Duration { return ds[min(len(ds)-1, len(ds)*q/100)] }
	return fmt.Sprintf("p50 %v  p99 %v  max %v", at(50).Round(time.Millisecond), at(99).Round(time.Millisecond),
		ds[len(ds)-1].Round(time.Millisecond))
}
