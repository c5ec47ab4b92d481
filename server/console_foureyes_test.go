package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/stacktest"
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

// TestFourEyesSockPuppet: four eyes hold against one person with two
// accounts. An admin who asked for a refund or a write-off cannot approve
// it with an account they created, nor approve what an account they
// created asked for; someone who made neither account can.
func TestFourEyesSockPuppet(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		env := newConsoleEnvOn(t, st)
		ctx := context.Background()
		admin, ops := env.login(access.RoleAdmin), env.login(access.RoleOps)
		newAccount := func(name string, role access.Role) *browser {
			t.Helper()
			addStaffWithLink(t, env, admin, name, role, testPassword)
			b := env.browser()
			if rec := b.login(name, testPassword); rec.Code != http.StatusSeeOther {
				t.Fatalf("login as %s: %d", name, rec.Code)
			}
			return b
		}
		request := func(by *browser, o core.Order) string {
			t.Helper()
			if rec := by.post("/console/orders/"+o.OrderNo+"/refund", url.Values{"reason": {"illness"}}); rec.Code != http.StatusSeeOther ||
				!strings.HasSuffix(rec.Header().Get("Location"), "?outcome=refund_requested") {
				t.Fatalf("refund request: %d to %q", rec.Code, rec.Header().Get("Location"))
			}
			rs, err := env.db.OrderRefunds(ctx, o.OrderNo)
			if err != nil || len(rs) != 1 {
				t.Fatalf("refund rows %+v %v", rs, err)
			}
			return fmt.Sprintf("/console/refunds/%d/approve", rs[0].ID)
		}
		refused := func(what string, rec *httptest.ResponseRecorder, status int) {
			t.Helper()
			if rec.Code != status || !strings.Contains(rec.Body.String(), "created") {
				t.Errorf("%s: status %d, want %d naming who created whom: %.300s", what, rec.Code, status, rec.Body)
			}
		}

		puppet := newAccount("second-admin", access.RoleAdmin)
		own := env.place(41, "A-1", "A-2")
		env.pay(own)
		approveOwn := request(admin, own)
		refused("the requester's new account approving", puppet.post(approveOwn, nil), http.StatusConflict)

		clerk := newAccount("new-clerk", access.RoleBoxOffice)
		theirs := env.place(42, "B-1", "B-2")
		env.pay(theirs)
		approveTheirs := request(clerk, theirs)
		refused("the creator of the requester's account approving", admin.post(approveTheirs, nil), http.StatusConflict)
		for _, o := range []core.Order{own, theirs} {
			if got, _, _ := env.engine.Order(ctx, o.OrderNo); got.Status != core.StatusPaid {
				t.Fatalf("order %s after refused approvals, want still paid", got.Status)
			}
		}
		for _, approve := range []string{approveOwn, approveTheirs} {
			if rec := ops.post(approve, nil); rec.Code != http.StatusSeeOther {
				t.Errorf("an unrelated approver: status %d: %.300s", rec.Code, rec.Body)
			}
		}

		late := env.place(43, "C-1")
		if _, err := env.engine.CancelAndRelease(ctx, core.CancelRequest{OrderNo: late.OrderNo, Reason: core.ReasonCustomer, Actor: "user:43"}); err != nil {
			t.Fatal(err)
		}
		env.pay(late)
		disc, err := env.db.Discrepancies(ctx, store.DiscrepancyOpen, 10, 0)
		if err != nil || len(disc) != 1 {
			t.Fatalf("discrepancies %v %v", disc, err)
		}
		move := fmt.Sprintf("/console/discrepancies/%d/move", disc[0].ID)
		if rec := admin.post(move, url.Values{"to": {"write_off_requested"}, "note": {"below the cost of a refund"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("ask for a write-off: status %d: %.300s", rec.Code, rec.Body)
		}
		refused("the requester's new account writing off", puppet.post(move, url.Values{"to": {"written_off"}, "note": {"agreed"}}), http.StatusForbidden)
		if rec := ops.post(move, url.Values{"to": {"written_off"}, "note": {"agreed"}}); rec.Code != http.StatusSeeOther {
			t.Errorf("an unrelated approver writing off: status %d: %.300s", rec.Code, rec.Body)
		}
	})
}
