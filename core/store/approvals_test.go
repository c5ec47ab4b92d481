package store

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"seatflow/core"
)

// TestApprovalsReads: the inbox's count leaves out what the viewer asked
// for; the waiting refund requests come with their order's code, oldest
// first; a requester's own requests are those of the window, decided or
// not, without the refunds they ran in one step; the orders search keeps
// only orders with a request waiting. Both databases.
func TestApprovalsReads(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		show := mkShow(t, db, 1, 4)
		var orders []core.Order
		for i, seat := range []string{"A-1", "A-2", "A-3"} {
			o := pending("SF-approve-"+strings.ToLower(seat), show.ID, int64(i+1), t0.Add(time.Duration(i)*time.Minute), seat)
			o.Code = "CODE000" + string(rune('1'+i))
			mustPlace(t, db, o)
			orders = append(orders, o)
		}
		rows := []core.Refund{
			{OrderNo: orders[0].OrderNo, RequestedBy: "staff:ann", State: core.RefundRequested, CreatedAt: t0},
			{OrderNo: orders[1].OrderNo, RequestedBy: "staff:bob", State: core.RefundRequested, CreatedAt: t0.Add(time.Minute)},
			{OrderNo: orders[2].OrderNo, RequestedBy: "staff:ann", ApprovedBy: "staff:bob", Actor: "staff:bob", State: core.RefundDone,
				CreatedAt: t0.Add(-time.Hour), DecidedAt: t0.Add(-time.Minute)},
			{OrderNo: orders[2].OrderNo, RequestedBy: "staff:ann", ApprovedBy: "staff:ann", State: core.RefundDone, CreatedAt: t0.Add(-2 * time.Hour)},
			{OrderNo: orders[2].OrderNo, RequestedBy: "staff:ann", State: core.RefundRejected, CreatedAt: t0.Add(-10 * 24 * time.Hour)},
		}
		ids := make([]int64, len(rows))
		if err := db.InRefundTx(ctx, func(tx core.RefundTx) error {
			for i, r := range rows {
				r.AmountCents, r.Reason = 1000, "r"
				var err error
				if ids[i], err = tx.InsertRefund(ctx, r); err != nil {
					return err
				}
			}
			return tx.InsertDiscrepancy(ctx, core.Discrepancy{OrderNo: orders[0].OrderNo, TxnID: "T1",
				Kind: core.DiscrepancySecondPayment, AmountCents: 1000, CreatedAt: t0})
		}); err != nil {
			t.Fatal(err)
		}
		cs, err := db.DiscrepancyCases(ctx, CaseQuery{})
		if err != nil || len(cs) != 1 {
			t.Fatalf("cases %v %v", cs, err)
		}
		if _, err := core.NewCases(db, nil).Move(ctx, cs[0].ID, core.CaseWriteOffRequested, "ann", "small", nil); err != nil {
			t.Fatal(err)
		}

		for _, tc := range []struct {
			viewer string
			want   int
		}{{"ann", 1}, {"bob", 2}, {"carl", 3}} {
			if n, err := db.ApprovalsWaiting(ctx, tc.viewer); err != nil || n != tc.want {
				t.Errorf("waiting for %s: %d %v, want %d", tc.viewer, n, err, tc.want)
			}
		}
		idsOf := func(rs []RefundOfOrder) []int64 {
			out := make([]int64, len(rs))
			for i, r := range rs {
				out[i] = r.ID
			}
			return out
		}
		waiting, err := db.RefundRequestsWaiting(ctx, 10)
		if err != nil || !slices.Equal(idsOf(waiting), []int64{ids[0], ids[1]}) || waiting[0].Code != "CODE0001" {
			t.Errorf("waiting %+v %v, want rows %d, %d with the first order's code", waiting, err, ids[0], ids[1])
		}
		mine, err := db.RefundRequestsBy(ctx, "staff:ann", t0.Add(-7*24*time.Hour), 10)
		if err != nil || !slices.Equal(idsOf(mine), []int64{ids[0], ids[2]}) {
			t.Errorf("ann's requests %v %v, want %d, %d", idsOf(mine), err, ids[0], ids[2])
		}

		// The write-off ann asked for, waiting and then approved by bob.
		since := time.Now().Add(-time.Hour)
		for _, step := range []struct {
			decide func() error
			by     string
			to     core.CaseState
		}{
			{func() error { return nil }, "", ""},
			{func() error {
				_, err := core.NewCases(db, nil).Move(ctx, cs[0].ID, core.CaseWrittenOff, "bob", "agreed", nil)
				return err
			}, "bob", core.CaseWrittenOff},
		} {
			if err := step.decide(); err != nil {
				t.Fatal(err)
			}
			ws, err := db.WriteOffRequestsBy(ctx, "ann", since, 10)
			if err != nil || len(ws) != 1 || ws[0].CaseID != cs[0].ID || ws[0].DecidedBy != step.by || ws[0].DecidedTo != step.to ||
				ws[0].DecidedAt.IsZero() != (step.by == "") || ws[0].AmountCents != 1000 {
				t.Errorf("ann's write-offs %+v %v, want case %d decided by %q to %q", ws, err, cs[0].ID, step.by, step.to)
			}
			if ws, err := db.WriteOffRequestsBy(ctx, "bob", since, 10); err != nil || len(ws) != 0 {
				t.Errorf("bob's write-offs %+v %v, want none", ws, err)
			}
		}

		for _, tc := range []struct {
			name string
			s    core.OrderSearch
			want []string
		}{
			{"requests waiting", core.OrderSearch{RefundRequested: true, Limit: 10}, []string{orders[1].OrderNo, orders[0].OrderNo}},
			{"with q", core.OrderSearch{Q: orders[0].OrderNo, RefundRequested: true, Limit: 10}, []string{orders[0].OrderNo}},
			{"with q of no request", core.OrderSearch{Q: orders[2].OrderNo, RefundRequested: true, Limit: 10}, nil},
			{"with a status", core.OrderSearch{Statuses: []core.OrderStatus{core.StatusPaid}, RefundRequested: true, Limit: 10}, nil},
		} {
			page, err := db.SearchOrders(ctx, tc.s)
			var got []string
			for _, o := range page.Orders {
				got = append(got, o.OrderNo)
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("%s: %v %v, want %v", tc.name, got, err, tc.want)
			}
		}
	})
}
