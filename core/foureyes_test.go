package core_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/stacktest"
)

// TestFourEyesAPIKey: a refund asked for through an API key above the
// threshold is a request, and whoever minted the key cannot approve it:
// the key is their hands, not a second person's.
func TestFourEyesAPIKey(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newRefundFixture(t, st, 1000, core.Config{})
		key, err := st.DB.CreateAPIKey(ctx, access.APIKey{Name: "back office", Prefix: "sfk_" + stacktest.RandHex(4),
			Scopes: []access.Scope{access.ScopeRefunds}, CreatedBy: "staff:alice", CreatedAt: time.Now()},
			stacktest.RandHex(32), core.AuditEntry{At: time.Now(), Staff: "staff:alice", Action: access.AuditAPIKeyAdd})
		if err != nil {
			t.Fatal(err)
		}
		o := f.paid(t, 1, "A-1", "A-2")
		out, err := f.refunds.Refund(ctx, core.RefundRequest{OrderNo: o.OrderNo, Reason: "r", Actor: "api:" + key.Prefix})
		if err != nil || !out.Pending {
			t.Fatalf("refund through the key: %+v %v, want a request", out, err)
		}
		for _, tc := range []struct {
			approver string
			want     *core.Error
		}{
			{"staff:alice", core.ErrLinkedApproval},
			{"api:" + key.Prefix, core.ErrSelfApproval},
		} {
			if _, err := f.refunds.Approve(ctx, out.Refund.ID, tc.approver, nil); !errors.Is(err, tc.want) {
				t.Errorf("%s approving the key's request: %v, want %s", tc.approver, err, tc.want.Code)
			}
		}
		if got := f.status(t, o.OrderNo); got != core.StatusPaid {
			t.Fatalf("status %v after refused approvals, want paid", got)
		}
		if _, err := f.refunds.Approve(ctx, out.Refund.ID, "staff:bob", nil); err != nil {
			t.Fatalf("a second person approving: %v", err)
		}
		if rows := f.refundRows(t, o.OrderNo); len(rows) != 1 || rows[0].RequestedBy != "api:"+key.Prefix || rows[0].ApprovedBy != "staff:bob" {
			t.Errorf("refund rows %+v", rows)
		}
	})
}

// TestFourEyesCreators: who made an account or key is one person with it,
// however many accounts lie between: alice made bob, bob made carol, carol
// minted a key. None of them approves another's request; dave, made from
// the command line, approves any of them.
func TestFourEyesCreators(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newRefundFixture(t, st, 1000, core.Config{})
		for _, a := range [][2]string{{"alice", "cli"}, {"bob", "staff:alice"}, {"carol", "staff:bob"}, {"dave", "cli"}, {"erin", "staff:carol"}} {
			if _, err := st.DB.CreateStaff(ctx, access.Staff{Username: a[0], Role: access.RoleAdmin, CreatedAt: time.Now(), CreatedBy: a[1]}, "x"); err != nil {
				t.Fatal(err)
			}
		}
		key, err := st.DB.CreateAPIKey(ctx, access.APIKey{Name: "carol's", Prefix: "sfk_" + stacktest.RandHex(4),
			Scopes: []access.Scope{access.ScopeRefunds}, CreatedBy: "staff:carol", CreatedAt: time.Now()},
			stacktest.RandHex(32), core.AuditEntry{At: time.Now(), Staff: "staff:carol", Action: access.AuditAPIKeyAdd})
		if err != nil {
			t.Fatal(err)
		}
		apiKey := "api:" + key.Prefix
		tests := []struct {
			requester, approver string
			want                error // nil: approved
		}{
			{"staff:alice", "staff:alice", core.ErrSelfApproval},
			{"staff:alice", "staff:bob", core.ErrLinkedApproval},
			{"staff:alice", "staff:carol", core.ErrLinkedApproval},
			{"staff:carol", "staff:alice", core.ErrLinkedApproval},
			{apiKey, "staff:alice", core.ErrLinkedApproval},
			{apiKey, "staff:carol", core.ErrLinkedApproval},
			{"staff:bob", "staff:dave", nil},
			{apiKey, "staff:dave", nil},
			// The key's minter made the approving account: one person
			// holds the key and chose the account's first password.
			{apiKey, "staff:erin", core.ErrLinkedApproval},
			{"staff:dave", "staff:carol", nil},
		}
		for i, tc := range tests {
			o := f.paid(t, int64(i+1), fmt.Sprintf("A-%d", i+1))
			out, err := f.refunds.Refund(ctx, core.RefundRequest{OrderNo: o.OrderNo, Reason: "r", Actor: tc.requester})
			if err != nil || !out.Pending {
				t.Fatalf("request by %s: %+v %v", tc.requester, out, err)
			}
			_, err = f.refunds.Approve(ctx, out.Refund.ID, tc.approver, nil)
			switch {
			case tc.want == nil && err != nil:
				t.Errorf("%s approving %s's request: %v", tc.approver, tc.requester, err)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Errorf("%s approving %s's request: %v, want %v", tc.approver, tc.requester, err, tc.want)
			case tc.want != nil && f.status(t, o.OrderNo) != core.StatusPaid:
				t.Errorf("%s approving %s's request: refused, yet the order is %v", tc.approver, tc.requester, f.status(t, o.OrderNo))
			}
		}
	})
}
