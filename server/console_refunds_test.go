package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
)

// Refunds from the console: box office refunds up to the threshold in one
// step and above it only asks; ops approve or reject (with a note); every
// refusal is a message on the order page, every decision audited.
func TestConsoleRefund(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	box, ops := env.login(access.RoleBoxOffice), env.login(access.RoleOps)
	status := func(o core.Order) core.OrderStatus {
		t.Helper()
		got, _, err := env.engine.Order(ctx, o.OrderNo)
		if err != nil {
			t.Fatal(err)
		}
		return got.Status
	}
	openRequest := func(o core.Order) int64 {
		t.Helper()
		rs, err := env.db.OrderRefunds(ctx, o.OrderNo)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.State == core.RefundRequested {
				return r.ID
			}
		}
		t.Fatalf("no open refund request on %s: %+v", o.OrderNo, rs)
		return 0
	}

	small := env.place(21, "C-1") // 5000, below the threshold
	env.pay(small)
	big := env.place(22, "A-1", "A-2") // 15000, above it
	env.pay(big)
	pending := env.place(23, "B-1")

	steps := []struct {
		name   string
		who    *browser
		path   func() string
		form   url.Values
		status int
		want   string // in the Location on 303, else in the page
	}{
		{"no reason", box, func() string { return "/console/orders/" + small.OrderNo + "/refund" }, url.Values{"reason": {"  "}}, 422, "Give a reason for the refund."},
		{"reason too long", box, func() string { return "/console/orders/" + small.OrderNo + "/refund" },
			url.Values{"reason": {strings.Repeat("r", core.MaxRefundReasonLen+1)}}, 422,
			fmt.Sprintf("The reason may have at most %d characters; it has %d.", core.MaxRefundReasonLen, core.MaxRefundReasonLen+1)},
		{"reference too long", box, func() string { return "/console/orders/" + small.OrderNo + "/refund" },
			url.Values{"reason": {"customer at desk"}, "reference": {strings.Repeat("ü", core.MaxRefundReferenceLen+1)}}, 422,
			fmt.Sprintf("The payment reference may have at most %d characters; it has %d.", core.MaxRefundReferenceLen, core.MaxRefundReferenceLen+1)},
		{"reference at the limit", box, func() string { return "/console/orders/" + small.OrderNo + "/refund" },
			url.Values{"reason": {"customer at desk"}, "reference": {"CASH-1" + strings.Repeat("ü", core.MaxRefundReferenceLen-6)}}, 303, "?outcome=refunded"},
		{"pending order", box, func() string { return "/console/orders/" + pending.OrderNo + "/refund" }, url.Values{"reason": {"x"}}, 409, "Only a paid order can be refunded."},
		{"refunded twice", box, func() string { return "/console/orders/" + small.OrderNo + "/refund" }, url.Values{"reason": {"again"}}, 409, "This order has already been refunded."},
		{"box office, above the threshold", box, func() string { return "/console/orders/" + big.OrderNo + "/refund" }, url.Values{"reason": {"illness"}}, 303, "?outcome=refund_requested"},
		{"a second request", box, func() string { return "/console/orders/" + big.OrderNo + "/refund" }, url.Values{"reason": {"illness"}}, 409, "already waits for approval"},
		{"box office may not approve", box, func() string { return "/console/refunds/" + strconv.FormatInt(openRequest(big), 10) + "/approve" }, url.Values{}, 403, ""},
		{"reject without a note", ops, func() string { return "/console/refunds/" + strconv.FormatInt(openRequest(big), 10) + "/reject" }, url.Values{"note": {""}}, 422, "Say why the request is rejected."},
		{"reject with a note too long", ops, func() string { return "/console/refunds/" + strconv.FormatInt(openRequest(big), 10) + "/reject" },
			url.Values{"note": {strings.Repeat("n", core.MaxRefundReasonLen+1)}}, 422,
			fmt.Sprintf("The note may have at most %d characters; it has %d.", core.MaxRefundReasonLen, core.MaxRefundReasonLen+1)},
		{"ops reject", ops, func() string { return "/console/refunds/" + strconv.FormatInt(openRequest(big), 10) + "/reject" }, url.Values{"note": {"past the refund deadline"}}, 303, "?outcome=refund_rejected"},
		{"asked again", box, func() string { return "/console/orders/" + big.OrderNo + "/refund" }, url.Values{"reason": {"doctor's note"}}, 303, "?outcome=refund_requested"},
		{"ops approve", ops, func() string { return "/console/refunds/" + strconv.FormatInt(openRequest(big), 10) + "/approve" }, url.Values{}, 303, "?outcome=refunded"},
		{"unknown request", ops, func() string { return "/console/refunds/999999/approve" }, url.Values{}, 404, ""},
	}
	for _, st := range steps {
		rec := st.who.post(st.path(), st.form)
		if rec.Code != st.status {
			t.Fatalf("%s: status %d, want %d: %.400s", st.name, rec.Code, st.status, rec.Body)
		}
		if st.status == http.StatusSeeOther {
			if loc := rec.Header().Get("Location"); !strings.HasSuffix(loc, st.want) {
				t.Fatalf("%s: Location %q, want …%s", st.name, loc, st.want)
			}
		} else if !strings.Contains(rec.Body.String(), st.want) {
			t.Fatalf("%s: page lacks %q", st.name, st.want)
		}
	}

	if s1, s2, s3 := status(small), status(big), status(pending); s1 != core.StatusRefunded || s2 != core.StatusRefunded || s3 != core.StatusPending {
		t.Errorf("statuses %v %v %v, want refunded refunded pending", s1, s2, s3)
	}
	rs, err := env.db.OrderRefunds(ctx, big.OrderNo)
	if err != nil || len(rs) != 2 || rs[0].State != core.RefundRejected || rs[0].Note != "past the refund deadline" ||
		rs[1].State != core.RefundDone || rs[1].RequestedBy != "staff:box_office-user" || rs[1].ApprovedBy != "staff:ops-user" {
		t.Errorf("refund rows of the big order: %+v %v", rs, err)
	}
	holds, err := env.stack.Seats.Holds(ctx, env.show.ID)
	if err != nil || len(holds) != 1 {
		t.Errorf("holds after the refunds: %v %v, want only the pending order's", holds, err)
	}
	page := ops.do("GET", "/console/orders/"+big.OrderNo+"?outcome=refunded", nil, nil).Body.String()
	for _, want := range []string{"Order refunded; its seats are back on sale.", `id="refunds"`, "past the refund deadline", "Refunded"} {
		if !strings.Contains(page, want) {
			t.Errorf("order page lacks %q", want)
		}
	}
	if strings.Contains(page, `id="refund-form"`) {
		t.Error("a refunded order still offers a refund")
	}
	for action, want := range map[string]int{core.AuditRefund: 1, core.AuditRefundRequest: 2, core.AuditRefundReject: 1, core.AuditRefundApprove: 1} {
		if n := env.auditCount(action); n != want {
			t.Errorf("%s audited %d times, want %d", action, n, want)
		}
	}
}
