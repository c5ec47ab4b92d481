package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/store"
)

// TestFourEyesOnMoney: a staff refund above the approval threshold is a
// request whatever the role, and writing off a discrepancy is asked for
// and approved; in both, who asked cannot approve.
func TestFourEyesOnMoney(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	ops, admin := env.login(access.RoleOps), env.login(access.RoleAdmin)

	big := env.place(31, "A-1", "A-2") // 15000, above the threshold
	env.pay(big)
	if rec := ops.post("/console/orders/"+big.OrderNo+"/refund", url.Values{"reason": {"illness"}}); rec.Code != http.StatusSeeOther ||
		!strings.HasSuffix(rec.Header().Get("Location"), "?outcome=refund_requested") {
		t.Fatalf("ops refunding above the threshold: %d to %q, want a request", rec.Code, rec.Header().Get("Location"))
	}
	rs, err := env.db.OrderRefunds(ctx, big.OrderNo)
	if err != nil || len(rs) != 1 || rs[0].State != core.RefundRequested {
		t.Fatalf("refund rows %+v %v", rs, err)
	}
	approve := fmt.Sprintf("/console/refunds/%d/approve", rs[0].ID)
	if rec := ops.post(approve, nil); rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "a second person must approve") {
		t.Errorf("ops approving their own request: status %d: %.300s", rec.Code, rec.Body)
	}
	if o, _, _ := env.engine.Order(ctx, big.OrderNo); o.Status != core.StatusPaid {
		t.Fatalf("order %s after a refused self-approval, want still paid", o.Status)
	}
	if rec := admin.post(approve, nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("a second person approving: status %d", rec.Code)
	}
	rs, _ = env.db.OrderRefunds(ctx, big.OrderNo)
	if rs[0].State != core.RefundDone || rs[0].RequestedBy != "staff:ops-user" || rs[0].ApprovedBy != "staff:admin-user" {
		t.Errorf("refund row %+v", rs[0])
	}

	late := env.place(32, "B-1")
	if _, err := env.engine.CancelAndRelease(ctx, core.CancelRequest{OrderNo: late.OrderNo, Reason: core.ReasonCustomer, Actor: "user:32"}); err != nil {
		t.Fatal(err)
	}
	env.pay(late) // after the cancel: a discrepancy case
	disc, err := env.db.Discrepancies(ctx, store.DiscrepancyOpen, 10, 0)
	if err != nil || len(disc) != 1 {
		t.Fatalf("discrepancies %v %v", disc, err)
	}
	move := fmt.Sprintf("/console/discrepancies/%d/move", disc[0].ID)
	if rec := ops.post(move, url.Values{"to": {"written_off"}, "note": {"small"}}); rec.Code != http.StatusConflict {
		t.Errorf("writing off straight from open: status %d, want 409", rec.Code)
	}
	if rec := ops.post(move, url.Values{"to": {"write_off_requested"}, "note": {"below the cost of a refund"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("ask for a write-off: status %d: %.300s", rec.Code, rec.Body)
	}
	if rec := ops.post(move, url.Values{"to": {"written_off"}, "note": {"approving my own"}}); rec.Code != http.StatusForbidden ||
		!strings.Contains(rec.Body.String(), "a second person must approve it") {
		t.Errorf("the asker approving the write-off: status %d: %.300s", rec.Code, rec.Body)
	}
	if rec := admin.post(move, url.Values{"to": {"written_off"}, "note": {"agreed"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("a second person writing off: status %d: %.300s", rec.Code, rec.Body)
	}
	if c, err := env.db.DiscrepancyCase(ctx, disc[0].ID); err != nil || c.State != core.CaseWrittenOff {
		t.Errorf("case after approval: %+v %v", c, err)
	}
}
