package checkin_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/checkin"
	"seatflow/core/stacktest"
)

// seatCodes are o's seat tickets by seat.
func (f *fixture) seatCodes(t *testing.T, o core.Order) map[string]string {
	t.Helper()
	ts, err := f.st.DB.SeatTickets(context.Background(), o.OrderNo)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string, len(ts))
	for _, tk := range ts {
		out[tk.SeatID] = tk.Code
	}
	return out
}

// TestSeatCodes: every seat of an order, placed online or held at the
// counter, has a code of its own, of SeatCodeLen characters of the order
// code's alphabet, none alike and none the order's.
func TestSeatCodes(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newFixture(t, st)
		counter := core.NewCounter(f.eng, st.DB)
		held, err := counter.Hold(ctx, core.CounterHold{ShowID: f.show.ID, SeatIDs: []string{"B-1", "B-2"}})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, o := range []core.Order{f.paid(t, "A-1", "A-2", "A-3"), held} {
			codes := f.seatCodes(t, o)
			if len(codes) != len(o.SeatIDs) {
				t.Fatalf("order %s: seat codes %v, want one for each of %v", o.OrderNo, codes, o.SeatIDs)
			}
			for seat, c := range codes {
				if n, isSeat, ok := core.NormalizeTicketCode(c); !ok || !isSeat || n != c || seen[c] || c == o.Code {
					t.Errorf("seat %s: code %q, want %d characters of %s, its own", seat, c, core.SeatCodeLen, core.CodeAlphabet)
				}
				seen[c] = true
			}
		}
	})
}

// TestAdmitSeatCode: a seat's code admits that seat only, answering like
// the order code does, and the order code still admits the seats left.
func TestAdmitSeatCode(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newFixture(t, st)
		other := st.NewShow(t, 2, 2)
		scan := func(r checkin.Request) (checkin.Admission, error) {
			if r.Gate == "" {
				r.Gate = "north"
			}
			r.Actor = "staff:door1"
			return f.desk.Admit(ctx, r)
		}
		must := func(t *testing.T, r checkin.Request) {
			t.Helper()
			if _, err := scan(r); err != nil {
				t.Fatal(err)
			}
		}
		cases := []struct {
			name  string
			setup func(t *testing.T) checkin.Request
			// result, reason: the answer; seats: the seats it names; count:
			// an admission's admitted seats of the order.
			result, reason string
			seats          []string
			count          int
		}{
			{name: "a seat code admits its seat only", setup: func(t *testing.T) checkin.Request {
				o := f.paid(t, "A-1", "A-2", "A-3")
				return checkin.Request{Code: f.seatCodes(t, o)["A-2"]}
			}, result: checkin.ResultAdmitted, seats: []string{"A-2"}, count: 1},
			{name: "as read out: lower case, a dash, confusables", setup: func(t *testing.T) checkin.Request {
				c := f.seatCodes(t, f.paid(t, "A-4"))["A-4"]
				return checkin.Request{Code: strings.NewReplacer("1", "l", "0", "o").Replace(strings.ToLower(c[:5] + "-" + c[5:]))}
			}, result: checkin.ResultAdmitted, seats: []string{"A-4"}, count: 1},
			{name: "the order code admits the seats its seat codes left", setup: func(t *testing.T) checkin.Request {
				o := f.paid(t, "B-1", "B-2", "B-3")
				must(t, checkin.Request{Code: f.seatCodes(t, o)["B-2"]})
				return checkin.Request{Code: o.Code}
			}, result: checkin.ResultAdmitted, seats: []string{"B-1", "B-3"}, count: 3},
			{name: "a seat code's second scan", setup: func(t *testing.T) checkin.Request {
				c := f.seatCodes(t, f.paid(t, "C-1", "C-2"))["C-1"]
				must(t, checkin.Request{Code: c, Gate: "south"})
				return checkin.Request{Code: c}
			}, result: checkin.ResultAlreadyCheckedIn, seats: []string{"C-1"}},
			{name: "a seat code after the order code", setup: func(t *testing.T) checkin.Request {
				o := f.paid(t, "C-3")
				must(t, checkin.Request{Code: o.Code, Gate: "south"})
				return checkin.Request{Code: f.seatCodes(t, o)["C-3"]}
			}, result: checkin.ResultAlreadyCheckedIn, seats: []string{"C-3"}},
			{name: "a partially refunded seat's code", setup: func(t *testing.T) checkin.Request {
				o := f.paid(t, "D-1", "D-2")
				c := f.seatCodes(t, o)["D-2"]
				if _, err := f.refunds.Refund(ctx, core.RefundRequest{OrderNo: o.OrderNo, SeatIDs: []string{"D-2"},
					Reason: "asked", Actor: "staff:olga"}); err != nil {
					t.Fatal(err)
				}
				return checkin.Request{Code: c}
			}, result: checkin.ResultNotValid, reason: checkin.ReasonUnknownCode},
			{name: "a refunded order's seat code", setup: func(t *testing.T) checkin.Request {
				o := f.paid(t, "D-3")
				c := f.seatCodes(t, o)["D-3"]
				if _, err := f.refunds.Refund(ctx, core.RefundRequest{OrderNo: o.OrderNo, Reason: "asked", Actor: "staff:olga"}); err != nil {
					t.Fatal(err)
				}
				return checkin.Request{Code: c}
			}, result: checkin.ResultNotValid, reason: checkin.ReasonUnknownCode},
			{name: "another show's seat code", setup: func(t *testing.T) checkin.Request {
				f.users++
				o, err := f.eng.Place(ctx, core.PlaceRequest{UserID: f.users, ShowID: other.ID, SeatIDs: []string{"A-1"}})
				if err != nil {
					t.Fatal(err)
				}
				if res, err := f.eng.HandlePayment(ctx, core.Payment{OrderNo: o.OrderNo, TxnID: "T-" + o.OrderNo,
					AmountCents: o.AmountCents}); err != nil || res != core.PaymentApplied {
					t.Fatalf("pay: %v %v", res, err)
				}
				return checkin.Request{Code: f.seatCodes(t, o)["A-1"], ShowID: f.show.ID}
			}, result: checkin.ResultNotValid, reason: checkin.ReasonAnotherShow, seats: []string{"A-1"}},
			{name: "an unpaid order's seat code", setup: func(t *testing.T) checkin.Request {
				return checkin.Request{Code: f.seatCodes(t, f.place(t, "E-1"))["E-1"]}
			}, result: checkin.ResultNotValid, reason: checkin.ReasonUnpaid, seats: []string{"E-1"}},
			{name: "a seat code asking for another seat of its order", setup: func(t *testing.T) checkin.Request {
				o := f.paid(t, "E-2", "E-3")
				return checkin.Request{Code: f.seatCodes(t, o)["E-2"], SeatIDs: []string{"E-3"}}
			}, result: checkin.ResultNotValid, reason: checkin.ReasonNotInOrder, seats: []string{"E-3"}},
			{name: "an unknown seat code", setup: func(t *testing.T) checkin.Request {
				return checkin.Request{Code: "ZZZZZZZZZZ"}
			}, result: checkin.ResultNotValid, reason: checkin.ReasonUnknownCode},
			{name: "nine characters are neither code", setup: func(t *testing.T) checkin.Request {
				c := f.seatCodes(t, f.paid(t, "E-4"))["E-4"]
				return checkin.Request{Code: c[:9]}
			}, result: checkin.ResultNotValid, reason: checkin.ReasonUnknownCode},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				a, err := scan(tc.setup(t))
				r := refusal(err)
				switch tc.result {
				case checkin.ResultAdmitted:
					if err != nil || fmt.Sprint(a.Seats) != fmt.Sprint(tc.seats) || a.AdmittedCount != tc.count {
						t.Fatalf("got %+v %v, want seats %v count %d", a, err, tc.seats, tc.count)
					}
				case checkin.ResultAlreadyCheckedIn:
					if !errors.Is(err, checkin.ErrAlreadyCheckedIn) || r == nil || fmt.Sprint(r.Seats) != fmt.Sprint(tc.seats) ||
						r.First == nil || r.First.SeatID != tc.seats[0] || r.First.Gate != "south" || !r.First.At.Equal(f.clock.Now()) {
						t.Fatalf("got %v %+v, want already_checked_in of %v, first at south now", err, r, tc.seats)
					}
				case checkin.ResultNotValid:
					if !errors.Is(err, checkin.ErrNotValid) || r == nil || r.Reason != tc.reason || fmt.Sprint(r.Seats) != fmt.Sprint(tc.seats) {
						t.Fatalf("got %v %+v, want not_valid %s naming %v", err, r, tc.reason, tc.seats)
					}
				}
			})
		}
	})
}

// TestUndoSeatCode: an undo by a seat's code clears that seat only.
func TestUndoSeatCode(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, stacktest.Embedded(t))
	o := f.paid(t, "A-1", "A-2")
	if _, err := f.desk.Admit(ctx, checkin.Request{Code: o.Code, Gate: "north", Actor: "staff:door1"}); err != nil {
		t.Fatal(err)
	}
	staff := &core.StaffAction{Staff: "staff:olga", Role: access.RoleOps, IP: "192.0.2.1"}
	undone, err := f.desk.Undo(ctx, f.seatCodes(t, o)["A-2"], "", nil, staff)
	if err != nil || len(undone) != 1 || undone[0].SeatID != "A-2" {
		t.Fatalf("undo: %+v %v, want A-2 only", undone, err)
	}
	a, err := f.desk.Admit(ctx, checkin.Request{Code: o.Code, Gate: "south", Actor: "staff:door2"})
	if err != nil || fmt.Sprint(a.Seats) != "[A-2]" {
		t.Fatalf("after the undo: %+v %v, want A-2 admitted again", a, err)
	}
}

// TestOfflineListSeatCodes: a valid order's ticket on the list carries
// the salted hash of each seat's code; a seat refunded away, or a
// refunded order, has none.
func TestOfflineListSeatCodes(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newFixture(t, st)
		paid := f.paid(t, "A-1", "A-2", "A-3")
		codes := f.seatCodes(t, paid)
		if _, err := f.refunds.Refund(ctx, core.RefundRequest{OrderNo: paid.OrderNo, SeatIDs: []string{"A-3"},
			Reason: "asked", Actor: "staff:olga"}); err != nil {
			t.Fatal(err)
		}
		refunded := f.paid(t, "B-1")
		if _, err := f.refunds.Refund(ctx, core.RefundRequest{OrderNo: refunded.OrderNo, Reason: "asked", Actor: "staff:olga"}); err != nil {
			t.Fatal(err)
		}
		l, err := f.desk.List(ctx, f.show.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			checkin.CodeHash(l.Salt, paid.Code):     fmt.Sprintf("[{%s A-1} {%s A-2}]", checkin.CodeHash(l.Salt, codes["A-1"]), checkin.CodeHash(l.Salt, codes["A-2"])),
			checkin.CodeHash(l.Salt, refunded.Code): "[]",
		}
		if len(l.Tickets) != len(want) {
			t.Fatalf("%d tickets %+v, want %d", len(l.Tickets), l.Tickets, len(want))
		}
		for _, tk := range l.Tickets {
			if got := fmt.Sprint(tk.SeatCodes); got != want[tk.Hash] {
				t.Errorf("ticket %s: seat codes %s, want %s", tk.Hash, got, want[tk.Hash])
			}
		}
	})
}

// TestSyncSeatCode: an offline gate's scan of a seat code is recorded for
// that seat at its gate and time; the order code synced later admits the
// rest, and the seat code scanned again at another gate is a double entry.
func TestSyncSeatCode(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newFixture(t, st)
		o := f.paid(t, "A-1", "A-2")
		c := f.seatCodes(t, o)["A-1"]
		sync := func(t *testing.T, gate, id, code string, ago time.Duration, seats ...string) checkin.Synced {
			t.Helper()
			got, err := f.desk.Sync(ctx, checkin.SyncRequest{Gate: gate, Actor: "staff:" + gate, ShowID: f.show.ID,
				Scans: []checkin.OfflineScan{{ID: id, Code: code, At: f.clock.Now().Add(-ago), SeatIDs: seats}}})
			if err != nil || len(got) != 1 {
				t.Fatalf("sync at %s: %+v %v", gate, got, err)
			}
			return got[0]
		}
		for _, step := range []struct {
			name, gate, id, code string
			ago                  time.Duration
			seats                []string // as door.js sends them
			result               string
			admitted             string
			first                string // double_entry's first gate
		}{
			{"seat code offline", "east", "0000000000000001", c, 5 * time.Minute, []string{"A-1"}, checkin.ResultAdmitted, "[A-1]", ""},
			{"order code offline: the rest", "west", "0000000000000002", o.Code, 4 * time.Minute, []string{"A-2"}, checkin.ResultAdmitted, "[A-2]", ""},
			{"seat code again elsewhere", "west", "0000000000000003", c, 3 * time.Minute, []string{"A-1"}, checkin.ResultDoubleEntry, "[A-1]", "east"},
			{"a seat code naming another seat", "west", "0000000000000004", c, 2 * time.Minute, []string{"A-2"}, checkin.ResultNotValid, "[A-2]", ""},
		} {
			t.Run(step.name, func(t *testing.T) {
				got := sync(t, step.gate, step.id, step.code, step.ago, step.seats...)
				if got.Result != step.result || fmt.Sprint(got.Seats) != step.admitted ||
					(step.first != "") != (got.First != nil) || (got.First != nil && got.First.Gate != step.first) {
					t.Fatalf("got %+v, want %s of %s (first at %q)", got, step.result, step.admitted, step.first)
				}
			})
		}
		tk, err := st.DB.AdmitTickets(ctx, checkin.Scan{OrderNo: o.OrderNo, SeatIDs: o.SeatIDs, At: f.clock.Now(), ID: "probe"})
		if err != nil || len(tk) != 2 || tk[0].Gate != "east" || !tk[0].At.Equal(f.clock.Now().Add(-5*time.Minute)) || tk[1].Gate != "west" {
			t.Fatalf("tickets %+v (%v): want A-1 at east 5 min ago, A-2 at west", tk, err)
		}
	})
}
