package core_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/stacktest"
	"seatflow/core/store"
)

// TestCaseMachine is the whole transition table: every (from, to) pair is
// allowed exactly when the state machine says so.
func TestCaseMachine(t *testing.T) {
	allowed := map[[2]core.CaseState]bool{
		{core.CaseOpen, core.CaseRefundRequested}:              true,
		{core.CaseOpen, core.CaseWriteOffRequested}:            true,
		{core.CaseRefundRequested, core.CaseRefunded}:          true,
		{core.CaseRefundRequested, core.CaseRefundFailed}:      true,
		{core.CaseRefundRequested, core.CaseWriteOffRequested}: true,
		{core.CaseRefundFailed, core.CaseRefundRequested}:      true,
		{core.CaseWriteOffRequested, core.CaseWrittenOff}:      true,
		{core.CaseWriteOffRequested, core.CaseOpen}:            true,
	}
	states := append(core.AllCaseStates(), "bogus")
	for _, from := range states {
		for _, to := range states {
			want := allowed[[2]core.CaseState{from, to}]
			err := core.CheckCaseMove(from, to)
			if (err == nil) != want {
				t.Errorf("%s → %s: err %v, want allowed=%t", from, to, err, want)
			}
			if err != nil && (!errors.Is(err, core.ErrInvalidTransition) || core.ErrorKind(err) != core.KindConflict) {
				t.Errorf("%s → %s: %v is not a conflict invalid_transition", from, to, err)
			}
		}
	}
	for _, c := range []struct {
		s            core.CaseState
		valid, final bool
	}{
		{core.CaseOpen, true, false}, {core.CaseRefundRequested, true, false}, {core.CaseRefundFailed, true, false},
		{core.CaseRefunded, true, true}, {core.CaseWrittenOff, true, true}, {"bogus", false, false},
	} {
		if c.s.Valid() != c.valid || c.s.Final() != c.final {
			t.Errorf("%s: valid %t final %t, want %t %t", c.s, c.s.Valid(), c.s.Final(), c.valid, c.final)
		}
	}
	err := core.CheckCaseMove(core.CaseRefunded, core.CaseOpen)
	if err == nil || err.Error() != "a case cannot move from refunded to open (allowed: none: the case is closed)" {
		t.Errorf("message from a final state: %v", err)
	}
}

// discFixture is a fixture with one discrepancy of each kind.
type discFixture struct {
	*fixture
	cases *core.Cases
	ids   map[string]int64 // kind → discrepancy id
	run   string           // suffix of this fixture's txn ids (the stack's database is shared)
}

// mine keeps the fixture's own cases.
func (f *discFixture) mine(cs []core.DiscrepancyCase) []core.DiscrepancyCase {
	return slices.DeleteFunc(cs, func(d core.DiscrepancyCase) bool { return !strings.HasSuffix(d.TxnID, f.run) })
}

func newDiscFixture(t *testing.T, st *stacktest.Stack) *discFixture {
	t.Helper()
	ctx := context.Background()
	f := &discFixture{fixture: newFixture(t, st, core.Config{}), ids: map[string]int64{}}
	f.cases = core.NewCases(st.DB, f.clock)
	// paid_after_cancel: the customer cancelled, then the money came.
	cancelled := f.place(t, 1, "A-1")
	if _, err := f.eng.Cancel(ctx, cancelled.OrderNo, 1); err != nil {
		t.Fatal(err)
	}
	// second_payment: a paid order is paid again under another txn.
	paid := f.place(t, 2, "A-2")
	// amount_mismatch: the money does not match the order.
	short := f.place(t, 3, "A-3")
	run := stacktest.RandHex(4)
	f.run = run
	callbacks := []struct {
		kind string
		p    core.Payment
	}{
		{core.DiscrepancyPaidAfterCancel, core.Payment{OrderNo: cancelled.OrderNo, TxnID: "late-" + run, AmountCents: cancelled.AmountCents}},
		{core.DiscrepancySecondPayment, core.Payment{OrderNo: paid.OrderNo, TxnID: "twice-" + run, AmountCents: paid.AmountCents}},
		{core.DiscrepancyAmountMismatch, core.Payment{OrderNo: short.OrderNo, TxnID: "short-" + run, AmountCents: short.AmountCents - 1}},
	}
	if res, err := f.pay(t, paid, "first-"+run); err != nil || res != core.PaymentApplied {
		t.Fatalf("first payment: %v %v", res, err)
	}
	for _, c := range callbacks {
		// The gateway delivers every callback three times.
		for i := range 3 {
			res, err := f.eng.HandlePayment(ctx, c.p)
			switch {
			case i == 0 && c.kind == core.DiscrepancyAmountMismatch:
				if !errors.Is(err, core.ErrAmountMismatch) {
					t.Fatalf("%s: %v %v", c.kind, res, err)
				}
			case i == 0:
				if err != nil || res != core.PaymentDiscrepancy {
					t.Fatalf("%s: %v %v", c.kind, res, err)
				}
			default:
				if err != nil || res != core.PaymentDuplicate {
					t.Fatalf("%s delivered again: %v %v, want duplicate", c.kind, res, err)
				}
			}
		}
	}
	all, err := st.DB.DiscrepancyCases(ctx, store.CaseQuery{})
	if err != nil {
		t.Fatal(err)
	}
	all = f.mine(all)
	for _, d := range all {
		if _, dup := f.ids[d.Kind]; dup {
			t.Fatalf("two cases of kind %s: %+v", d.Kind, all)
		}
		f.ids[d.Kind] = d.ID
		if d.State != core.CaseOpen || d.Owner != "" || d.Status != core.DiscrepancyOpen {
			t.Errorf("new case %+v: want open, unowned", d)
		}
	}
	if len(all) != 3 || len(f.ids) != 3 {
		t.Fatalf("cases %+v: want exactly one of each of the 3 kinds", all)
	}
	return f
}

func TestDiscrepancyCases(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()

		t.Run("the whole machine, with history", func(t *testing.T) {
			f := newDiscFixture(t, st)
			id := f.ids[core.DiscrepancyPaidAfterCancel]
			c, err := f.cases.Take(ctx, id, "ann", "", nil)
			if err != nil || c.Owner != "ann" || c.State != core.CaseOpen {
				t.Fatalf("take: %+v %v", c, err)
			}
			if _, err := f.cases.Take(ctx, id, "ann", "", nil); err != nil {
				t.Fatalf("take again by the owner: %v", err)
			}
			steps := []struct {
				to      core.CaseState
				wantErr error
			}{
				{core.CaseRefunded, core.ErrInvalidTransition}, // not requested yet
				{core.CaseRefundRequested, nil},
				{core.CaseOpen, core.ErrInvalidTransition}, // no way back
				{core.CaseRefundFailed, nil},
				{core.CaseWriteOffRequested, core.ErrInvalidTransition}, // retry first
				{core.CaseRefundRequested, nil},
				{core.CaseRefunded, nil},
				{core.CaseRefundRequested, core.ErrInvalidTransition}, // closed
				{core.CaseWriteOffRequested, core.ErrInvalidTransition},
			}
			for i, s := range steps {
				f.clock.Advance(time.Minute)
				_, err := f.cases.Move(ctx, id, s.to, "bob", fmt.Sprintf("step %d", i), nil)
				if !errors.Is(err, s.wantErr) && !(err == nil && s.wantErr == nil) {
					t.Fatalf("step %d → %s: %v, want %v", i, s.to, err, s.wantErr)
				}
			}
			if _, err := f.cases.Take(ctx, id, "bob", "", nil); !errors.Is(err, core.ErrCaseClosed) {
				t.Errorf("take a closed case: %v", err)
			}
			if _, err := f.cases.Note(ctx, id, "bob", "late note", nil); !errors.Is(err, core.ErrCaseClosed) {
				t.Errorf("note on a closed case: %v", err)
			}
			got, err := st.DB.DiscrepancyCase(ctx, id)
			if err != nil || got.State != core.CaseRefunded || got.Owner != "ann" || got.Status != core.DiscrepancyResolved ||
				got.ResolvedBy != "bob" || got.Note != "step 6" || !got.ResolvedAt.Equal(f.clock.Now().Add(-2*time.Minute)) {
				t.Errorf("closed case %+v, %v", got, err)
			}
			hist, err := st.DB.CaseHistory(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, h := range hist {
				lines = append(lines, fmt.Sprintf("%s %s %s→%s %q", h.Staff, h.Action, h.From, h.To, h.Note))
			}
			want := []string{
				`ann take open→open ""`,
				`bob move open→refund_requested "step 1"`,
				`bob move refund_requested→refund_failed "step 3"`,
				`bob move refund_failed→refund_requested "step 5"`,
				`bob move refund_requested→refunded "step 6"`,
			}
			if fmt.Sprint(lines) != fmt.Sprint(want) {
				t.Errorf("history\n got %q\nwant %q", lines, want)
			}
		})

		t.Run("rules", func(t *testing.T) {
			f := newDiscFixture(t, st)
			id := f.ids[core.DiscrepancyAmountMismatch]
			if _, err := f.cases.Move(ctx, id, core.CaseWrittenOff, "ann", "", nil); !errors.Is(err, core.ErrNoteRequired) {
				t.Errorf("move without a note: %v", err)
			}
			if _, err := f.cases.Move(ctx, id, "lost", "ann", "x", nil); !errors.Is(err, core.ErrInvalid) {
				t.Errorf("unknown state: %v", err)
			}
			if _, err := f.cases.Move(ctx, 999999, core.CaseWrittenOff, "ann", "x", nil); !errors.Is(err, core.ErrDiscrepancyNotFound) {
				t.Errorf("unknown case: %v", err)
			}
			// Asking for a write-off makes the case the asker's; only a
			// second person writes it off, and nobody takes it over meanwhile.
			c, err := f.cases.Move(ctx, id, core.CaseWriteOffRequested, "ann", "customer kept the difference", nil)
			if err != nil || c.Owner != "ann" || c.Status == core.DiscrepancyResolved {
				t.Fatalf("ask for a write-off: %+v %v", c, err)
			}
			if _, err := f.cases.Move(ctx, id, core.CaseWrittenOff, "ann", "approving my own", nil); !errors.Is(err, core.ErrSelfApproval) ||
				core.ErrorKind(err) != core.KindForbidden {
				t.Errorf("the asker approving: %v, want self_approval", err)
			}
			if _, err := f.cases.Take(ctx, id, "bob", "", nil); !errors.Is(err, core.ErrAwaitingApproval) {
				t.Errorf("taking over a write-off request: %v, want awaiting_approval", err)
			}
			c, err = f.cases.Move(ctx, id, core.CaseWrittenOff, "bob", "approved: the amount is below the cost of a refund", nil)
			if err != nil || c.Owner != "ann" || c.Status != core.DiscrepancyResolved {
				t.Fatalf("write off by a second person: %+v %v", c, err)
			}
			// A request sent back is open again, and then anyone may ask anew.
			back := f.ids[core.DiscrepancyPaidAfterCancel]
			if _, err := f.cases.Move(ctx, back, core.CaseWriteOffRequested, "ann", "write it off?", nil); err != nil {
				t.Fatal(err)
			}
			if c, err := f.cases.Move(ctx, back, core.CaseOpen, "bob", "no: refund it", nil); err != nil || c.State != core.CaseOpen {
				t.Fatalf("send back: %+v %v", c, err)
			}
			other := f.ids[core.DiscrepancySecondPayment]
			if _, err := f.cases.Take(ctx, other, "ann", "", nil); err != nil {
				t.Fatal(err)
			}
			if c, err := f.cases.Take(ctx, other, "bob", "", nil); err != nil || c.Owner != "bob" {
				t.Fatalf("take over: %+v %v", c, err)
			}
			hist, _ := st.DB.CaseHistory(ctx, other)
			if len(hist) != 2 || hist[1].Note != "taken over from ann" {
				t.Errorf("take-over history %+v", hist)
			}
			// The queue: filters, oldest first.
			for _, q := range []struct {
				name string
				q    store.CaseQuery
				want int
			}{
				{"open", store.CaseQuery{States: []core.CaseState{core.CaseOpen}}, 2},
				{"written off", store.CaseQuery{States: []core.CaseState{core.CaseWrittenOff}}, 1},
				{"by kind", store.CaseQuery{Kind: core.DiscrepancySecondPayment}, 1},
				{"by owner", store.CaseQuery{Owner: "bob"}, 1},
				{"by the asker of write-offs", store.CaseQuery{Owner: "ann"}, 2},
				{"unowned", store.CaseQuery{Unowned: true}, 0},
			} {
				got, err := st.DB.DiscrepancyCases(ctx, q.q)
				if got = f.mine(got); err != nil || len(got) != q.want {
					t.Errorf("queue %s: %d cases (%v), want %d", q.name, len(got), err, q.want)
				}
			}
		})

		t.Run("two staff move one case at once: one wins", func(t *testing.T) {
			f := newDiscFixture(t, st)
			id := f.ids[core.DiscrepancyPaidAfterCancel]
			var (
				wg   sync.WaitGroup
				errs [2]error
			)
			for i, to := range []core.CaseState{core.CaseRefundRequested, core.CaseWriteOffRequested} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = f.cases.Move(ctx, id, to, fmt.Sprintf("staff-%d", i), "racing", nil)
				}()
			}
			wg.Wait()
			hist, err := st.DB.CaseHistory(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			// Both may succeed only in sequence (open → refund_requested →
			// write_off_requested); never both out of open.
			fromOpen := 0
			for _, h := range hist {
				if h.From == core.CaseOpen {
					fromOpen++
				}
			}
			if fromOpen != 1 {
				t.Errorf("moves out of open: %d (%+v), errs %v", fromOpen, hist, errs)
			}
			for _, err := range errs {
				if err != nil && !errors.Is(err, core.ErrInvalidTransition) {
					t.Errorf("loser's error %v, want invalid_transition", err)
				}
			}
		})
	})
}
