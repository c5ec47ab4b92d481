package server

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/stacktest"
	"seatflow/core/store"
)

// failAuditInserts makes every insert into audit_log fail, in whatever
// transaction it runs, until the returned func drops the trigger.
func failAuditInserts(t *testing.T, db *store.DB) (restore func()) {
	t.Helper()
	create := `CREATE TRIGGER audit_insert_fault BEFORE INSERT ON audit_log
 BEGIN SELECT RAISE(ABORT, 'injected audit insert failure'); END`
	if db.Dialect() == store.MySQL {
		create = `CREATE TRIGGER audit_insert_fault BEFORE INSERT ON audit_log FOR EACH ROW
 SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected audit insert failure'`
	}
	if _, err := db.X().Exec(create); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		if _, err := db.X().Exec(`DROP TRIGGER audit_insert_fault`); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConsoleAuditInChangeTxAuditInsertFault runs each staff action whose
// audit row belongs to the change's transaction (force-cancel, extend, case
// steps, refunds) first with the audit insert failing: the action must fail
// and its change roll back. Then without the fault: the change is made and
// exactly one audit row says who did it and what came of it.
func TestConsoleAuditInChangeTxAuditInsertFault(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		env := newConsoleEnvOn(t, st)
		ctx := context.Background()
		show := st.NewShow(t, 4, 6) // A row: 7500 a seat; two are above the refund threshold
		user := int64(100)
		place := func(seats ...string) core.Order {
			t.Helper()
			user++
			o, err := env.engine.Place(ctx, core.PlaceRequest{UserID: user, ShowID: show.ID, SeatIDs: seats})
			if err != nil {
				t.Fatalf("place %v: %v", seats, err)
			}
			return o
		}
		paid := func(seats ...string) core.Order {
			t.Helper()
			o := place(seats...)
			if res := env.pay(o); res != core.PaymentApplied {
				t.Fatalf("pay %s: %s", o.OrderNo, res)
			}
			return o
		}
		order := func(no string) func() string {
			return func() string {
				t.Helper()
				o, err := env.db.Order(ctx, no)
				if err != nil {
					t.Fatal(err)
				}
				rs, err := env.db.OrderRefunds(ctx, no)
				if err != nil {
					t.Fatal(err)
				}
				states := make([]core.RefundState, len(rs))
				for i, r := range rs {
					states[i] = r.State
				}
				return fmt.Sprintf("%s expires %s refunds %v", o.Status, o.ExpireAt, states)
			}
		}
		// discrepancy opens a case: a payment for an order already cancelled.
		discrepancy := func(seat string) int64 {
			t.Helper()
			o := place(seat)
			if _, err := env.engine.CancelAndRelease(ctx, core.CancelRequest{OrderNo: o.OrderNo,
				Reason: core.ReasonCustomer, Actor: "user:x"}); err != nil {
				t.Fatal(err)
			}
			if res := env.pay(o); res != core.PaymentDiscrepancy {
				t.Fatalf("payment after cancel: %s", res)
			}
			open, err := env.db.Discrepancies(ctx, store.DiscrepancyOpen, 100, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range open {
				if d.OrderNo == o.OrderNo {
					return d.ID
				}
			}
			t.Fatalf("no case for %s", o.OrderNo)
			return 0
		}
		caseState := func(id int64) func() string {
			return func() string {
				t.Helper()
				c, err := env.db.DiscrepancyCase(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				return fmt.Sprintf("%s owner %q note %q", c.State, c.Owner, c.Note)
			}
		}
		refunds, err := core.NewRefunds(env.engine, env.db, consoleRefundApprovalCents)
		if err != nil {
			t.Fatal(err)
		}
		request := func(seats ...string) (core.Order, string) {
			t.Helper()
			o := paid(seats...)
			out, err := refunds.Refund(ctx, core.RefundRequest{OrderNo: o.OrderNo, Reason: "illness", Actor: "staff:bo"})
			if err != nil || !out.Pending {
				t.Fatalf("refund request: %+v %v", out, err)
			}
			return o, strconv.FormatInt(out.Refund.ID, 10)
		}

		type step struct {
			path    string
			form    url.Values
			target  string        // of the audit row
			state   func() string // the change's subject, as a comparable snapshot
			changes bool          // the action (without the fault) changes the subject
		}
		cases := []struct {
			name   string
			role   access.Role
			setup  func() step
			status int // without the fault
			action string
			detail map[string]any // keys the audit row's detail must have
		}{
			{"force-cancel", access.RoleBoxOffice, func() step {
				o := place("B-1")
				return step{"/console/orders/" + o.OrderNo + "/cancel", url.Values{"reason": {"at the desk"}, "confirm": {"1"}},
					"order:" + o.OrderNo, order(o.OrderNo), true}
			}, 303, core.AuditForceCancel, map[string]any{"outcome": "cancelled", "reason": "at the desk", "seat_ids": []any{"B-1"}}},
			{"force-cancel of a paid order", access.RoleBoxOffice, func() step {
				o := paid("B-2")
				return step{"/console/orders/" + o.OrderNo + "/cancel", url.Values{"reason": {"at the desk"}, "confirm": {"1"}},
					"order:" + o.OrderNo, order(o.OrderNo), false}
			}, 303, core.AuditForceCancel, map[string]any{"outcome": "already_paid"}},
			{"extend", access.RoleBoxOffice, func() step {
				o := place("B-3")
				return step{"/console/orders/" + o.OrderNo + "/extend", url.Values{"minutes": {"10"}, "reason": {"at the ATM"}},
					"order:" + o.OrderNo, order(o.OrderNo), true}
			}, 303, core.AuditExtendHold, map[string]any{"outcome": "extended", "minutes": float64(10), "reason": "at the ATM"}},
			{"extend over the limit", access.RoleBoxOffice, func() step {
				o := place("B-4")
				if _, err := env.engine.Extend(ctx, o.OrderNo, 100*time.Minute, "staff:x", "first", nil); err != nil {
					t.Fatal(err)
				}
				return step{"/console/orders/" + o.OrderNo + "/extend", url.Values{"minutes": {"10"}, "reason": {"again"}},
					"order:" + o.OrderNo, order(o.OrderNo), false}
			}, 422, core.AuditExtendHold, map[string]any{"outcome": core.ErrHoldLimit.Code}},
			{"case take", access.RoleOps, func() step {
				id := discrepancy("C-1")
				return step{fmt.Sprintf("/console/discrepancies/%d/take", id), url.Values{}, fmt.Sprintf("discrepancy:%d", id), caseState(id), true}
			}, 303, core.AuditCaseTake, map[string]any{"from": "open", "to": "open", "owner": "ops-user"}},
			{"case move", access.RoleOps, func() step {
				id := discrepancy("C-2")
				return step{fmt.Sprintf("/console/discrepancies/%d/move", id), url.Values{"to": {"refund_requested"}, "note": {"asked the PSP"}},
					fmt.Sprintf("discrepancy:%d", id), caseState(id), true}
			}, 303, core.AuditCaseMove, map[string]any{"from": "open", "to": "refund_requested", "note": "asked the PSP"}},
			{"case note", access.RoleOps, func() step {
				id := discrepancy("C-3")
				return step{fmt.Sprintf("/console/discrepancies/%d/note", id), url.Values{"note": {"called the bank"}}, fmt.Sprintf("discrepancy:%d", id), caseState(id), true}
			}, 303, core.AuditCaseNote, map[string]any{"from": "open", "to": "open", "note": "called the bank"}},
			{"refund", access.RoleOps, func() step {
				o := paid("B-5")
				return step{"/console/orders/" + o.OrderNo + "/refund", url.Values{"reason": {"illness"}, "reference": {"R-1"}},
					"order:" + o.OrderNo, order(o.OrderNo), true}
			}, 303, core.AuditRefund, map[string]any{"reason": "illness", "reference": "R-1", "seat_ids": []any{"B-5"}}},
			{"refund request", access.RoleBoxOffice, func() step {
				o := paid("A-1", "A-2")
				return step{"/console/orders/" + o.OrderNo + "/refund", url.Values{"reason": {"illness"}}, "order:" + o.OrderNo, order(o.OrderNo), true}
			}, 303, core.AuditRefundRequest, map[string]any{"reason": "illness", "amount_cents": float64(15000)}},
			{"refund approve", access.RoleOps, func() step {
				o, id := request("A-3", "A-4")
				return step{"/console/refunds/" + id + "/approve", url.Values{}, "order:" + o.OrderNo, order(o.OrderNo), true}
			}, 303, core.AuditRefundApprove, map[string]any{"requested_by": "staff:bo", "amount_cents": float64(15000)}},
			{"refund reject", access.RoleOps, func() step {
				o, id := request("A-5", "A-6")
				return step{"/console/refunds/" + id + "/reject", url.Values{"note": {"past the deadline"}}, "order:" + o.OrderNo, order(o.OrderNo), true}
			}, 303, core.AuditRefundReject, map[string]any{"requested_by": "staff:bo", "note": "past the deadline"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				s := tc.setup()
				b := env.login(tc.role)
				rows := func() []core.AuditEntry {
					t.Helper()
					all, err := env.db.AuditLog(ctx, store.AuditQuery{Limit: 1000})
					if err != nil {
						t.Fatal(err)
					}
					var out []core.AuditEntry
					for _, a := range all {
						if a.Action == tc.action && a.Target == s.target {
							out = append(out, a)
						}
					}
					return out
				}
				before := s.state()
				restore := failAuditInserts(t, env.db)
				rec := b.post(s.path, s.form)
				restore()
				if rec.Code < 500 {
					t.Errorf("audit insert failing: status %d, want an error page; body %.300s", rec.Code, rec.Body)
				}
				if got := s.state(); got != before {
					t.Errorf("audit insert failing: the change was not rolled back: %s, was %s", got, before)
				}
				if got := rows(); len(got) != 0 {
					t.Errorf("audit insert failing: rows %+v", got)
				}

				if rec := b.post(s.path, s.form); rec.Code != tc.status {
					t.Fatalf("status %d, want %d; body %.300s", rec.Code, tc.status, rec.Body)
				}
				if got := s.state(); (got != before) != s.changes {
					t.Errorf("after the action: %s, was %s (a change expected: %v)", got, before, s.changes)
				}
				got := rows()
				if len(got) != 1 {
					t.Fatalf("audit rows %s %s: %+v, want exactly one", tc.action, s.target, got)
				}
				a := got[0]
				if who := env.staff[tc.role]; a.Staff != who.Username || a.Role != who.Role || a.IP != b.ip {
					t.Errorf("audit row by %s (%s) from %s, want %s (%s) from %s", a.Staff, a.Role, a.IP, who.Username, who.Role, b.ip)
				}
				for k, want := range tc.detail {
					if !reflect.DeepEqual(a.Detail[k], want) {
						t.Errorf("detail %s = %#v, want %#v (detail %v)", k, a.Detail[k], want, a.Detail)
					}
				}
			})
		}
	})
}
