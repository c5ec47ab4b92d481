package web

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"seatflow/core"
)

// TestOpsCatalog checks the keys the ops pages build from data at run time.
func TestOpsCatalog(t *testing.T) {
	var want []string
	for _, s := range core.AllCaseStates() {
		want = append(want, "case.state."+string(s))
	}
	for _, tab := range CaseStateTabs() {
		want = append(want, "disc.tab."+tab)
	}
	for _, r := range []string{core.ReasonTimeout, core.ReasonCustomer, core.ReasonStaff, core.ReasonReconcile} {
		want = append(want, "race.did."+r, "race.path."+r)
	}
	want = append(want, "race.did.not_expired", "race.did.payment", "race.path.payment",
		"ev.kind."+core.EventExtended, "ev.kind."+core.EventEndAttempt,
		"ev.outcome."+core.AttemptLost, "ev.outcome."+core.AttemptNotExpired)
	for _, a := range []string{core.AuditExtendHold, core.AuditCaseTake, core.AuditCaseMove, core.AuditCaseNote,
		core.AuditReconcileDryRun, core.AuditReconcileApply} {
		want = append(want, "audit.action."+a)
	}
	for _, a := range []string{core.CaseActionTake, core.CaseActionNote} {
		want = append(want, "case.action."+a)
	}
	for _, r := range []string{ResultWould, ResultReport, ResultFixed, ResultFailed, ResultSkipped, ResultGone} {
		want = append(want, "reconcile.result."+r)
	}
	for _, a := range []string{"cancel", "mark_sold", "delete_row", "release", "relock", "set_limit", "report", "release_sold", "block", "unblock", "resend", "transfer", "requeue"} {
		want = append(want, "reconcile.action."+a)
	}
	// The server sets these as form errors and notices.
	want = append(want, "extend.err_minutes", "extend.err_reason", "extend.err_limit", "extend.err_expired",
		"case.err_transition", "case.err_closed", "case.err_note", "case.err_busy",
		"notice.case_taken", "notice.case_moved", "notice.case_noted", "notice.reconcile_busy")
	for _, k := range want {
		if !Known(k) {
			t.Errorf("catalog lacks %q", k)
		}
	}
}

func TestRaceAttempts(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := func(ms int, kind string, detail map[string]any) core.Event {
		return core.Event{At: t0.Add(time.Duration(ms) * time.Millisecond), Kind: kind, Detail: detail}
	}
	lost := func(ms int, actor, reason, outcome string) core.Event {
		return ev(ms, core.EventEndAttempt, map[string]any{"actor": actor, "reason": reason, "outcome": outcome, "winner_status": "paid"})
	}
	placed := ev(0, core.EventPlaced, nil)
	for _, c := range []struct {
		name string
		evs  []core.Event
		want []Attempt
	}{
		{"no race: one actor", []core.Event{placed, ev(5, core.EventCancelled, map[string]any{"actor": "user:7", "reason": "customer"})}, nil},
		{"payment wins, two lose", []core.Event{placed,
			ev(10, core.EventPaid, map[string]any{"txn_id": "T1"}),
			lost(11, "system", "timeout", core.AttemptLost),
			lost(12, "user:7", "customer", core.AttemptLost),
			ev(13, core.EventTimeoutFired, map[string]any{"outcome": "ignored"}),
		}, []Attempt{
			{At: t0.Add(10 * time.Millisecond), Who: "T1", Path: "payment", Won: true},
			{At: t0.Add(11 * time.Millisecond), Who: "system", Path: "timeout", Did: "race.did.timeout"},
			{At: t0.Add(12 * time.Millisecond), Who: "user:7", Path: "customer", Did: "race.did.customer"},
		}},
		{"timeout wins; the payment's discrepancy, a double click, an extension's not_expired", []core.Event{placed,
			lost(8, "system", "timeout", core.AttemptNotExpired),
			ev(10, core.EventCancelled, map[string]any{"actor": "system", "reason": "timeout"}),
			ev(11, core.EventDiscrepancy, map[string]any{"txn_id": "T2", "kind": core.DiscrepancyPaidAfterCancel}),
			lost(12, "staff:ann", "staff", core.AttemptLost),
			lost(13, "staff:ann", "staff", core.AttemptLost),
			ev(14, core.EventAmountMismatch, map[string]any{"txn_id": "T3"}),
		}, []Attempt{
			{At: t0.Add(8 * time.Millisecond), Who: "system", Path: "timeout", Did: "race.did.not_expired"},
			{At: t0.Add(10 * time.Millisecond), Who: "system", Path: "timeout", Won: true},
			{At: t0.Add(11 * time.Millisecond), Who: "T2", Path: "payment", Did: "race.did.payment"},
			{At: t0.Add(12 * time.Millisecond), Who: "staff:ann", Path: "staff", Did: "race.did.staff", Repeats: 1},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := RaceAttempts(c.evs); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestLagChart(t *testing.T) {
	c := LagChart{Bounds: []time.Duration{50 * time.Millisecond, 1500 * time.Millisecond, time.Minute, 15 * time.Minute},
		Counts: map[string][]int{core.PathTimeout: {2, 1, 0, 0, 0}, core.PathReconcile: {0, 0, 0, 3, 1}}}
	var got []string
	for _, b := range c.Buckets() {
		got = append(got, fmt.Sprintf("%s=%d%v", b.Label, b.Total, b.Segments))
	}
	want := []string{"<50ms=2[{timeout 2}]", "<1.5s=1[{timeout 1}]", "<1m=0[]", "<15m=3[{reconcile 3}]", "≥15m=1[{reconcile 1}]"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("buckets %q, want %q", got, want)
	}
	if c.Max() != 3 || c.PathTotal(core.PathTimeout) != 3 || c.PathTotal(core.PathSweep) != 0 {
		t.Errorf("max %d, timeout total %d, sweep total %d", c.Max(), c.PathTotal(core.PathTimeout), c.PathTotal(core.PathSweep))
	}
}

func TestCaseFilter(t *testing.T) {
	for _, c := range []struct {
		f      CaseFilter
		page   int
		values string
		states []core.CaseState
	}{
		{CaseFilter{}, 1, "", []core.CaseState{core.CaseOpen, core.CaseRefundRequested, core.CaseRefundFailed, core.CaseWriteOffRequested}},
		{CaseFilter{State: CaseStateActive}, 2, "?page=2", []core.CaseState{core.CaseOpen, core.CaseRefundRequested, core.CaseRefundFailed, core.CaseWriteOffRequested}},
		{CaseFilter{State: CaseStateAll, Kind: "second_payment"}, 1, "?kind=second_payment&state=all", nil},
		{CaseFilter{State: "refunded", Owner: "ann"}, 1, "?owner=ann&state=refunded", []core.CaseState{core.CaseRefunded}},
		{CaseFilter{Unowned: true}, 1, "?unowned=1", []core.CaseState{core.CaseOpen, core.CaseRefundRequested, core.CaseRefundFailed, core.CaseWriteOffRequested}},
	} {
		if v := c.f.Values(c.page); v != c.values {
			t.Errorf("%+v.Values(%d) = %q, want %q", c.f, c.page, v, c.values)
		}
		if s := c.f.States(); !reflect.DeepEqual(s, c.states) {
			t.Errorf("%+v.States() = %v, want %v", c.f, s, c.states)
		}
	}
	d := DiscrepanciesData{Counts: map[core.CaseState]int{core.CaseOpen: 2, core.CaseRefundFailed: 1, core.CaseRefunded: 4}}
	for tab, want := range map[string]int{CaseStateActive: 3, CaseStateAll: 7, "refunded": 4, "written_off": 0} {
		if got := d.TabCount(tab); got != want {
			t.Errorf("TabCount(%s) = %d, want %d", tab, got, want)
		}
	}
}

// TestAppliedItems pairs a dry run's items with the run that applied it.
func TestAppliedItems(t *testing.T) {
	cancel := ReconcileItem{OrderNo: "O1", ShowID: 1, UserID: 1, Action: "cancel"}
	cancelled := cancel
	cancelled.SeatIDs, cancelled.Fixed = []string{"A-1"}, true // seats named once repaired
	release := ReconcileItem{OrderNo: "O2", ShowID: 1, SeatIDs: []string{"A-2"}, UserID: 2, Action: "release"}
	released := release
	released.Fixed = true
	gone := ReconcileItem{OrderNo: "O3", ShowID: 1, SeatIDs: []string{"A-3"}, Action: "release"}
	failed := ReconcileItem{OrderNo: "O4", ShowID: 1, SeatIDs: []string{"A-4"}, Action: "release", Error: "redis down"}
	newer := ReconcileItem{OrderNo: "O5", ShowID: 1, UserID: 5, Action: "cancel", Fixed: true}
	d := ReconcileRunData{
		Applied: &ReconcileRun{DryRun: true, Checks: []ReconcileCheck{
			{Name: "expired_pending", Items: []ReconcileItem{cancel}},
			{Name: "stale_redis_lock", Items: []ReconcileItem{release, gone, failed}},
		}},
		Run: ReconcileRun{Checks: []ReconcileCheck{
			{Name: "expired_pending", Items: []ReconcileItem{cancelled, newer}},
			{Name: "stale_redis_lock", Items: []ReconcileItem{released, failed}},
		}},
	}
	listed, extra := d.AppliedItems()
	var got []string
	for _, a := range listed {
		got = append(got, a.Item.OrderNo+":"+a.Result())
	}
	if want := []string{"O1:fixed", "O2:fixed", "O3:gone", "O4:failed"}; !reflect.DeepEqual(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
	if len(extra) != 1 || extra[0].Item.OrderNo != "O5" || extra[0].Result() != ResultFixed {
		t.Errorf("extra %+v, want O5 fixed", extra)
	}
	if ItemResult(cancel, true) != ResultWould || ItemResult(ReconcileItem{Action: "report"}, false) != ResultReport ||
		ItemResult(ReconcileItem{Action: "release"}, false) != ResultSkipped {
		t.Error("ItemResult of a dry run, a report, an item left alone")
	}
}
