package checkin_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/checkin"
	"seatflow/core/stacktest"
)

// TestOfflineList: a show's list names each paid or refunded order by the
// salted hash of its code, with its seats, state and admitted seats; a
// pending order and another show's are not on it.
func TestOfflineList(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newFixture(t, st)
		paid := f.paid(t, "A-1", "A-2")
		if _, err := f.desk.Admit(ctx, checkin.Request{Code: paid.Code, Gate: "north", SeatIDs: []string{"A-2"}}); err != nil {
			t.Fatal(err)
		}
		refunded := f.paid(t, "B-1")
		if _, err := f.refunds.Refund(ctx, core.RefundRequest{OrderNo: refunded.OrderNo, Reason: "asked", Actor: "staff:olga"}); err != nil {
			t.Fatal(err)
		}
		f.place(t, "C-1") // pending: no ticket yet
		l, err := f.desk.List(ctx, f.show.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Salt) != 16 || l.ShowID != f.show.ID || !l.At.Equal(f.clock.Now()) {
			t.Fatalf("list %+v: want show %d, a 16-digit salt, made now", l, f.show.ID)
		}
		want := map[string]string{
			checkin.CodeHash(l.Salt, paid.Code):     "valid [A-1 A-2] [A-2]",
			checkin.CodeHash(l.Salt, refunded.Code): "refunded [] []",
		}
		if len(l.Tickets) != len(want) {
			t.Fatalf("%d tickets %+v, want %d", len(l.Tickets), l.Tickets, len(want))
		}
		for _, tk := range l.Tickets {
			if got := fmt.Sprintf("%s %v %v", tk.State, tk.Seats, tk.Admitted); got != want[tk.Hash] {
				t.Errorf("ticket %s: %s, want %q", tk.Hash, got, want[tk.Hash])
			}
		}
		again, err := f.desk.List(ctx, f.show.ID)
		if err != nil || again.Salt == l.Salt {
			t.Fatalf("a second list has salt %q (%v): want a fresh one", again.Salt, err)
		}
	})
}

// TestSync: each offline scan is recorded at its gate and time; a ticket
// another scan had admitted opens one double_entry case naming both; the
// same scan sent again changes nothing; a ticket that stopped admitting
// after the list was made is not_valid with its reason.
func TestSync(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newFixture(t, st)
		ids := 0
		scanOf := func(code string, ago time.Duration) checkin.OfflineScan {
			ids++
			return checkin.OfflineScan{ID: fmt.Sprintf("%016x", ids), Code: code, At: f.clock.Now().Add(-ago)}
		}
		sync := func(t *testing.T, gate string, scans ...checkin.OfflineScan) []checkin.Synced {
			t.Helper()
			got, err := f.desk.Sync(ctx, checkin.SyncRequest{Gate: gate, Actor: "staff:" + gate, ShowID: f.show.ID, Scans: scans})
			if err != nil {
				t.Fatalf("sync at %s: %v", gate, err)
			}
			return got
		}
		cases := []struct {
			name string
			// run syncs (and scans online) and returns the last answer
			// and the order whose cases to count.
			run    func(t *testing.T) (checkin.Synced, core.Order)
			result string
			reason string
			cases  int
			// firstGate is double_entry's first admission; note, words
			// its case must have.
			firstGate string
			note      []string
		}{
			{name: "admitted at the gate's time", run: func(t *testing.T) (checkin.Synced, core.Order) {
				o := f.paid(t, "A-1", "A-2")
				got := sync(t, "east", scanOf(o.Code, 10*time.Minute))
				// A scan of the admitted seats admits nothing and reads them.
				tk, err := st.DB.AdmitTickets(ctx, checkin.Scan{OrderNo: o.OrderNo, SeatIDs: o.SeatIDs, At: f.clock.Now(), ID: "probe"})
				if err != nil || len(tk) != 2 || !tk[0].At.Equal(f.clock.Now().Add(-10*time.Minute)) || tk[0].Gate != "east" || tk[0].Actor != "staff:east" {
					t.Fatalf("tickets %+v (%v): want admitted 10 min ago at east by staff:east", tk, err)
				}
				return got[0], o
			}, result: checkin.ResultAdmitted},
			{name: "sent again", run: func(t *testing.T) (checkin.Synced, core.Order) {
				o := f.paid(t, "A-3")
				s := scanOf(o.Code, time.Minute)
				sync(t, "east", s)
				return sync(t, "east", s)[0], o
			}, result: checkin.ResultAdmitted},
			{name: "two offline gates", run: func(t *testing.T) (checkin.Synced, core.Order) {
				o := f.paid(t, "B-1")
				sync(t, "east", scanOf(o.Code, 3*time.Minute))
				return sync(t, "west", scanOf(o.Code, 2*time.Minute))[0], o
			}, result: checkin.ResultDoubleEntry, cases: 1, firstGate: "east", note: []string{"B-1", "at gate east", "then", "at gate west"}},
			{name: "double entry sent again opens one case", run: func(t *testing.T) (checkin.Synced, core.Order) {
				o := f.paid(t, "B-2")
				sync(t, "east", scanOf(o.Code, 3*time.Minute))
				s := scanOf(o.Code, 2*time.Minute)
				first := sync(t, "west", s)[0]
				again := sync(t, "west", s)[0]
				if again.CaseID != first.CaseID || again.Result != checkin.ResultDoubleEntry {
					t.Fatalf("sent again: %+v, want the same case as %+v", again, first)
				}
				return again, o
			}, result: checkin.ResultDoubleEntry, cases: 1, firstGate: "east"},
			{name: "one gate twice in one request, listed out of order", run: func(t *testing.T) (checkin.Synced, core.Order) {
				o := f.paid(t, "B-3")
				later, earlier := scanOf(o.Code, time.Minute), scanOf(o.Code, 5*time.Minute)
				got := sync(t, "east", later, earlier)
				if got[0].ID != earlier.ID || got[0].Result != checkin.ResultAdmitted {
					t.Fatalf("first answer %+v: want the earlier scan %s admitted", got[0], earlier.ID)
				}
				return got[1], o
			}, result: checkin.ResultDoubleEntry, cases: 1, firstGate: "east"},
			{name: "admitted online before the offline scan arrived", run: func(t *testing.T) (checkin.Synced, core.Order) {
				o := f.paid(t, "B-4")
				if _, err := f.desk.Admit(ctx, checkin.Request{Code: o.Code, Gate: "main", Actor: "staff:main"}); err != nil {
					t.Fatal(err)
				}
				return sync(t, "west", scanOf(o.Code, 30*time.Second))[0], o
			}, result: checkin.ResultDoubleEntry, cases: 1, firstGate: "main",
				// the offline scan happened first: the note says so
				note: []string{"at gate west by staff:west, then", "at gate main by staff:main"}},
			{name: "part of an order at one gate, all of it at another", run: func(t *testing.T) (checkin.Synced, core.Order) {
				o := f.paid(t, "D-1", "D-2")
				first := scanOf(o.Code, 3*time.Minute)
				first.SeatIDs = []string{"D-1"}
				if got := sync(t, "east", first)[0]; got.Result != checkin.ResultAdmitted || fmt.Sprint(got.Seats) != "[D-1]" {
					t.Fatalf("east's part: %+v, want D-1 admitted", got)
				}
				return sync(t, "west", scanOf(o.Code, 2*time.Minute))[0], o
			}, result: checkin.ResultDoubleEntry, cases: 1, firstGate: "east", note: []string{"D-1"}},
			{name: "an online scan whose answer was lost, sent again offline", run: func(t *testing.T) (checkin.Synced, core.Order) {
				o := f.paid(t, "D-3")
				s := scanOf(o.Code, 0)
				if _, err := f.desk.Admit(ctx, checkin.Request{Code: o.Code, Gate: "east", Actor: "staff:east", ScanID: s.ID}); err != nil {
					t.Fatal(err)
				}
				return sync(t, "east", s)[0], o
			}, result: checkin.ResultAdmitted},
			{name: "a gate's clock an hour ahead", run: func(t *testing.T) (checkin.Synced, core.Order) {
				o := f.paid(t, "D-4")
				got := sync(t, "east", scanOf(o.Code, -time.Hour))[0]
				tk, err := st.DB.AdmitTickets(ctx, checkin.Scan{OrderNo: o.OrderNo, SeatIDs: o.SeatIDs, At: f.clock.Now(), ID: "probe"})
				if !got.AtCorrected || err != nil || len(tk) != 1 || !tk[0].At.Equal(f.clock.Now()) {
					t.Fatalf("answer %+v, tickets %+v (%v): want it recorded at the server's time, and said so", got, tk, err)
				}
				return got, o
			}, result: checkin.ResultAdmitted},
			{name: "refunded after the list was made", run: func(t *testing.T) (checkin.Synced, core.Order) {
				o := f.paid(t, "C-1")
				if _, err := f.refunds.Refund(ctx, core.RefundRequest{OrderNo: o.OrderNo, Reason: "asked", Actor: "staff:olga"}); err != nil {
					t.Fatal(err)
				}
				return sync(t, "east", scanOf(o.Code, time.Minute))[0], o
			}, result: checkin.ResultNotValid, reason: checkin.ReasonRefunded},
			{name: "unknown code", run: func(t *testing.T) (checkin.Synced, core.Order) {
				return sync(t, "east", scanOf("ZZZZZZZZ", time.Minute))[0], core.Order{}
			}, result: checkin.ResultNotValid, reason: checkin.ReasonUnknownCode},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				got, o := tc.run(t)
				if got.Result != tc.result || got.Reason != tc.reason {
					t.Fatalf("got %+v, want %s %s", got, tc.result, tc.reason)
				}
				if o.OrderNo == "" {
					return
				}
				var opened []core.Discrepancy
				all, err := st.DB.Discrepancies(ctx, "", 1000, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range all {
					if d.OrderNo == o.OrderNo {
						opened = append(opened, d)
					}
				}
				if len(opened) != tc.cases {
					t.Fatalf("%d cases %+v, want %d", len(opened), opened, tc.cases)
				}
				if tc.cases == 0 {
					return
				}
				d := opened[0]
				if d.Kind != checkin.DiscrepancyDoubleEntry || got.CaseID == 0 || got.First == nil || got.First.Gate != tc.firstGate {
					t.Fatalf("case %+v, answer %+v: want a double_entry case first at %s", d, got, tc.firstGate)
				}
				for _, w := range tc.note {
					if !strings.Contains(d.Note, w) {
						t.Errorf("case note %q lacks %q", d.Note, w)
					}
				}
			})
		}
		for result, want := range map[string]float64{checkin.ResultAdmitted: 11, checkin.ResultDoubleEntry: 6, checkin.ResultNotValid: 2} {
			if got := counter(t, f.reg, result); got != want {
				t.Errorf("seatflow_checkins_total{result=%q} = %v, want %v", result, got, want)
			}
		}
	})
}

// TestSyncBadRequests: a malformed sync is refused whole, naming the field,
// and records nothing.
func TestSyncBadRequests(t *testing.T) {
	st := stacktest.Embedded(t)
	f := newFixture(t, st)
	o := f.paid(t, "A-1")
	ok := checkin.OfflineScan{ID: "00000000000000aa", Code: o.Code, At: f.clock.Now()}
	with := func(edit func(*checkin.OfflineScan)) []checkin.OfflineScan {
		s := ok
		edit(&s)
		return []checkin.OfflineScan{s}
	}
	for _, tc := range []struct {
		name  string
		gate  string
		scans []checkin.OfflineScan
		field string
	}{
		{"no gate", "", []checkin.OfflineScan{ok}, "gate"},
		{"no scans", "east", nil, "scans"},
		{"too many scans", "east", slices.Repeat([]checkin.OfflineScan{ok}, checkin.MaxSyncScans+1), "scans"},
		{"id not hex", "east", with(func(s *checkin.OfflineScan) { s.ID = "00000000000000ZZ" }), "scans[0].id"},
		{"id too short", "east", with(func(s *checkin.OfflineScan) { s.ID = "aa" }), "scans[0].id"},
		{"id twice", "east", []checkin.OfflineScan{ok, ok}, "scans[1].id"},
		{"no code", "east", with(func(s *checkin.OfflineScan) { s.Code = " " }), "scans[0].code"},
		{"a code past 64 characters", "east", with(func(s *checkin.OfflineScan) { s.Code = strings.Repeat("Z", 65) }), "scans[0].code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.desk.Sync(context.Background(), checkin.SyncRequest{Gate: tc.gate, Scans: tc.scans})
			var ce *core.Error
			if core.ErrorKind(err) != core.KindInvalid || !errors.As(err, &ce) || ce.Field != tc.field {
				t.Fatalf("got %v, want invalid on %s", err, tc.field)
			}
		})
	}
	c, err := f.desk.Counts(context.Background(), f.show.ID)
	if err != nil || c.Admitted != 0 {
		t.Fatalf("counts %+v (%v): the refused syncs admitted tickets", c, err)
	}
}
