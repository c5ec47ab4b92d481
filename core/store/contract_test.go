package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"seatflow/core"
)

// TestContract runs every case against a fresh, migrated database of each
// backend: SQLite always, MariaDB when SEATFLOW_TEST_MYSQL is set.
func TestContract(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, db *DB)
	}{
		{"MigrateTwiceIsNoop", testMigrateTwice},
		{"CreateShowAndSeats", testCreateShowAndSeats},
		{"PlaceOrder", testPlaceOrder},
		{"DuplicateSeat", testDuplicateSeat},
		{"InTxRollback", testInTxRollback},
		{"TransitionSequential", testTransitionSequential},
		{"TransitionConcurrent", testTransitionConcurrent},
		{"DeleteOrderSeats", testDeleteOrderSeats},
		{"InsertPayment", testInsertPayment},
		{"Events", testEvents},
		{"ClaimTimeoutHop", testClaimTimeoutHop},
		{"ClaimTimeoutHops", testClaimTimeoutHops},
		{"TimeoutSend", testTimeoutSend},
		{"TakenSeats", testTakenSeats},
		{"OrphanSeats", testOrphanSeats},
		{"PendingOrders", testPendingOrders},
		{"ExpiredPending", testExpiredPending},
		{"Discrepancies", testDiscrepancies},
		{"OrderCounts", testOrderCounts},
	}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.run(t, b.open(t)) })
			}
		})
	}
}

func testMigrateTwice(t *testing.T, db *DB) {
	ctx := context.Background()
	show := mkShow(t, db, 1, 2)
	before := count(t, db, "SELECT COUNT(*) FROM goose_db_version")
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	if after := count(t, db, "SELECT COUNT(*) FROM goose_db_version"); after != before {
		t.Errorf("goose_db_version rows %d -> %d", before, after)
	}
	if _, err := db.Show(ctx, show.ID); err != nil {
		t.Errorf("show lost by second migrate: %v", err)
	}
}

func testCreateShowAndSeats(t *testing.T, db *DB) {
	ctx := context.Background()
	show := mkShow(t, db, 3, 12)
	if show.ID == 0 || show.Rows != 3 || show.Cols != 12 {
		t.Fatalf("created show %+v", show)
	}
	got, err := db.Show(ctx, show.ID)
	if err != nil || !reflect.DeepEqual(got, show) {
		t.Fatalf("Show = %+v, %v; want %+v", got, err, show)
	}
	if _, err := db.Show(ctx, show.ID+100); !errors.Is(err, core.ErrShowNotFound) {
		t.Errorf("missing show: %v, want ErrShowNotFound", err)
	}
	second, err := db.CreateShow(ctx, core.Show{Name: "Earlier", StartsAt: t0}, DemoSeats(1, 1, 5))
	if err != nil {
		t.Fatal(err)
	}
	shows, err := db.Shows(ctx)
	if err != nil || len(shows) != 2 || shows[0].ID != second.ID {
		t.Errorf("Shows = %+v, %v; want the earlier show first", shows, err)
	}
	seats, err := db.Seats(ctx, show.ID)
	if err != nil || len(seats) != 36 {
		t.Fatalf("Seats = %d, %v; want 36", len(seats), err)
	}
	want0 := core.Seat{ShowID: show.ID, SeatID: "A-1", Row: 1, Col: 1, PriceCents: 1500, RowLabel: "A", Number: 1, X: 1, Y: 1}
	if seats[0] != want0 || seats[11].SeatID != "A-12" || seats[12].SeatID != "B-1" {
		t.Errorf("plan order: %+v … %+v %+v", seats[0], seats[11], seats[12])
	}
	dup := []core.Seat{{SeatID: "A-1", Row: 1, Col: 1}, {SeatID: "A-1", Row: 1, Col: 2}}
	if _, err := db.CreateShow(ctx, core.Show{Name: "Dup"}, dup); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("duplicate seat in plan: %v, want ErrInvalid", err)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM show_info WHERE name = 'Dup'"); n != 0 {
		t.Errorf("failed CreateShow left %d show rows", n)
	}
}

func testPlaceOrder(t *testing.T, db *DB) {
	ctx := context.Background()
	show := mkShow(t, db, 2, 12)
	o := pending("O1", show.ID, 7, t0, "A-10", "B-1", "A-2")
	o.TimeoutHop, o.TimeoutDueAt = 1, t0.Add(10*time.Minute)
	mustPlace(t, db, o)
	got, err := db.Order(ctx, "O1")
	if err != nil {
		t.Fatal(err)
	}
	want := o
	want.SeatIDs = []string{"A-2", "A-10", "B-1"}
	if len(got.Code) != core.CodeLen {
		t.Errorf("order without a code got code %q", got.Code)
	}
	want.Code = got.Code // drawn at random by InsertOrder
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Order =\n%+v\nwant\n%+v", got, want)
	}
	if _, err := db.Order(ctx, "nope"); !errors.Is(err, core.ErrOrderNotFound) {
		t.Errorf("missing order: %v, want ErrOrderNotFound", err)
	}
	if n := count(t, db, "SELECT seat_count FROM order_info WHERE order_no = 'O1'"); n != 3 {
		t.Errorf("seat_count = %d", n)
	}
	var locked core.Order
	err = db.InTx(ctx, func(tx core.Tx) error {
		locked, err = tx.OrderForUpdate(ctx, "O1")
		return err
	})
	if err != nil || !reflect.DeepEqual(locked, want) {
		t.Errorf("OrderForUpdate = %+v, %v", locked, err)
	}
	err = db.InTx(ctx, func(tx core.Tx) error {
		_, err := tx.OrderForUpdate(ctx, "nope")
		return err
	})
	if !errors.Is(err, core.ErrOrderNotFound) {
		t.Errorf("OrderForUpdate missing: %v", err)
	}
	if err := place(ctx, db, pending("O2", show.ID, 7, t0, "A-1", "A-1")); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("seat twice in one order: %v, want ErrInvalid", err)
	}
}

func testDuplicateSeat(t *testing.T, db *DB) {
	ctx := context.Background()
	show := mkShow(t, db, 1, 5)
	mustPlace(t, db, pending("O1", show.ID, 1, t0, "A-1", "A-2", "A-4"))
	err := place(ctx, db, pending("O2", show.ID, 2, t0, "A-3", "A-2", "A-4", "A-5"))
	if !errors.Is(err, core.ErrSeatUnavailable) {
		t.Fatalf("err = %v, want ErrSeatUnavailable", err)
	}
	var ce *core.Error
	if !errors.As(err, &ce) || !reflect.DeepEqual(ce.Seats, []string{"A-2", "A-4"}) {
		t.Errorf("error names seats %v, want [A-2 A-4]", ce.Seats)
	}
	if _, err := db.Order(ctx, "O2"); !errors.Is(err, core.ErrOrderNotFound) {
		t.Errorf("rolled-back order still there: %v", err)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM order_seat WHERE order_no = 'O2'"); n != 0 {
		t.Errorf("rolled-back order left %d seats", n)
	}
	// The seats the loser asked for and nobody holds are still free.
	mustPlace(t, db, pending("O3", show.ID, 2, t0, "A-3", "A-5"))
}

func testInTxRollback(t *testing.T, db *DB) {
	ctx := context.Background()
	show := mkShow(t, db, 1, 3)
	boom := errors.New("boom")
	err := db.InTx(ctx, func(tx core.Tx) error {
		if err := tx.InsertOrder(ctx, pending("O1", show.ID, 1, t0, "A-1")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("InTx error = %v, want fn's", err)
	}
	func() {
		defer func() {
			if p := recover(); p != "panic!" {
				t.Errorf("recovered %v, want the callback's panic", p)
			}
		}()
		_ = db.InTx(ctx, func(tx core.Tx) error {
			if err := tx.InsertOrder(ctx, pending("O2", show.ID, 1, t0, "A-2")); err != nil {
				return err
			}
			panic("panic!")
		})
	}()
	if n := count(t, db, "SELECT COUNT(*) FROM order_info"); n != 0 {
		t.Errorf("%d orders after rollbacks", n)
	}
	// The writer is free again after both rollbacks.
	mustPlace(t, db, pending("O3", show.ID, 1, t0, "A-3"))
}

func testTransitionSequential(t *testing.T, db *DB) {
	ctx := context.Background()
	show := mkShow(t, db, 1, 2)
	mustPlace(t, db, pending("O1", show.ID, 1, t0, "A-1"))
	at := t0.Add(time.Minute)
	steps := []struct {
		to      core.OrderStatus
		tr      core.Transition
		wantWon bool
	}{
		{core.StatusPaid, core.Transition{At: at, Actor: "psp", TxnID: "T1"}, true},
		{core.StatusCancelled, core.Transition{At: at.Add(time.Second), Reason: core.ReasonTimeout, Actor: core.ActorSystem}, false},
		{core.StatusPaid, core.Transition{At: at.Add(time.Second), TxnID: "T2"}, false},
	}
	for i, s := range steps {
		won, err := transition(ctx, db, "O1", s.to, s.tr)
		if err != nil || won != s.wantWon {
			t.Errorf("step %d: won=%v err=%v, want %v", i, won, err, s.wantWon)
		}
	}
	if won, err := transition(ctx, db, "missing", core.StatusPaid, core.Transition{At: at}); won || err != nil {
		t.Errorf("missing order: won=%v err=%v", won, err)
	}
	o, err := db.Order(ctx, "O1")
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != core.StatusPaid || !o.ClosedAt.Equal(at) || o.PaidTxnID != "T1" || o.CancelActor != "psp" || o.CancelReason != "" {
		t.Errorf("after transitions: %+v", o)
	}
}

func testTransitionConcurrent(t *testing.T, db *DB) {
	ctx := context.Background()
	show := mkShow(t, db, 1, 2)
	mustPlace(t, db, pending("O1", show.ID, 1, t0, "A-1", "A-2"))
	const n = 20
	var (
		wg     sync.WaitGroup
		wins   atomic.Int32
		errs   = make(chan error, n)
		winner atomic.Value
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			to, tr := core.StatusCancelled, core.Transition{At: t0, Reason: core.ReasonTimeout, Actor: fmt.Sprint(i)}
			if i%2 == 0 {
				to, tr = core.StatusPaid, core.Transition{At: t0, Actor: fmt.Sprint(i), TxnID: fmt.Sprint("T", i)}
			}
			// A win counts once its transaction committed: a closure that won
			// and then lost its commit (a deadlock InTx runs again) is no win.
			var won bool
			err := db.InTx(ctx, func(tx core.Tx) error {
				var err error
				won, err = tx.TransitionPending(ctx, "O1", to, tr)
				if err != nil || !won {
					return err
				}
				if to == core.StatusCancelled {
					_, err = tx.DeleteOrderSeats(ctx, "O1")
				}
				return err
			})
			if err != nil {
				errs <- err
				return
			}
			if won {
				wins.Add(1)
				winner.Store(tr.Actor)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("transition: %v", err)
	}
	if w := wins.Load(); w != 1 {
		t.Fatalf("%d winners, want exactly 1", w)
	}
	o, err := db.Order(ctx, "O1")
	if err != nil || o.CancelActor != winner.Load() {
		t.Errorf("order %+v, %v; winner was %v", o, err, winner.Load())
	}
}

func testDeleteOrderSeats(t *testing.T, db *DB) {
	ctx := context.Background()
	show := mkShow(t, db, 1, 12)
	mustPlace(t, db, pending("O1", show.ID, 1, t0, "A-11", "A-3"))
	mustPlace(t, db, pending("O2", show.ID, 2, t0, "A-1"))
	var got, again []string
	err := db.InTx(ctx, func(tx core.Tx) error {
		var err error
		if got, err = tx.DeleteOrderSeats(ctx, "O1"); err != nil {
			return err
		}
		again, err = tx.DeleteOrderSeats(ctx, "O1")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"A-3", "A-11"}) || len(again) != 0 {
		t.Errorf("deleted %v then %v; want [A-3 A-11] then none", got, again)
	}
	holds, err := db.TakenSeats(ctx, show.ID)
	if err != nil || seatIDsOf(holds) != "A-1:locked:O2" {
		t.Errorf("taken after delete: %s, %v", seatIDsOf(holds), err)
	}
	// The order still lists the seats it was placed with.
	if o, _ := db.Order(ctx, "O1"); !reflect.DeepEqual(o.SeatIDs, []string{"A-3", "A-11"}) {
		t.Errorf("order seats after delete: %v", o.SeatIDs)
	}
}

func testInsertPayment(t *testing.T, db *DB) {
	ctx := context.Background()
	p := core.Payment{TxnID: "T1", OrderNo: "O1", AmountCents: 100, PaidAt: t0, ReceivedAt: t0.Add(time.Second), Result: string(core.PaymentApplied)}
	var first, second, other bool
	err := db.InTx(ctx, func(tx core.Tx) error {
		var err error
		if first, err = tx.InsertPayment(ctx, p); err != nil {
			return err
		}
		if second, err = tx.InsertPayment(ctx, p); err != nil {
			return err
		}
		// Still usable after the duplicate.
		other, err = tx.InsertPayment(ctx, core.Payment{TxnID: "T2", OrderNo: "O1"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !first || second || !other {
		t.Errorf("inserted first=%v second=%v other=%v, want true false true", first, second, other)
	}
	var again bool
	err = db.InTx(ctx, func(tx core.Tx) error {
		again, err = tx.InsertPayment(ctx, p)
		return err
	})
	if err != nil || again {
		t.Errorf("repeat in a later tx: %v %v, want false", again, err)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM payment WHERE txn_id = 'T1' AND result = 'paid' AND received_at = ?", ms(p.ReceivedAt)); n != 1 {
		t.Errorf("payment rows = %d, want 1", n)
	}
}

func testEvents(t *testing.T, db *DB) {
	ctx := context.Background()
	evs := []core.Event{
		{OrderNo: "O1", At: t0, Kind: core.EventPlaced, Detail: map[string]any{"seats": []any{"A-1"}, "amount": 2500}},
		{OrderNo: "O1", At: t0.Add(time.Second), Kind: core.EventTimeoutScheduled, Detail: map[string]any{"hop": 1, "level": "10m"}},
		{OrderNo: "O1", At: t0.Add(time.Second), Kind: core.EventCancelled},
	}
	if err := db.AddEvent(ctx, evs[0]); err != nil {
		t.Fatal(err)
	}
	err := db.InTx(ctx, func(tx core.Tx) error {
		if err := tx.AddEvent(ctx, evs[1]); err != nil {
			return err
		}
		return tx.AddEvent(ctx, evs[2])
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AddEvent(ctx, core.Event{OrderNo: "O2", At: t0, Kind: core.EventPlaced}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Events(ctx, "O1")
	if err != nil {
		t.Fatal(err)
	}
	want := []core.Event{
		{OrderNo: "O1", At: t0, Kind: core.EventPlaced, Detail: map[string]any{"seats": []any{"A-1"}, "amount": 2500.0}},
		{OrderNo: "O1", At: t0.Add(time.Second), Kind: core.EventTimeoutScheduled, Detail: map[string]any{"hop": 1.0, "level": "10m"}},
		{OrderNo: "O1", At: t0.Add(time.Second), Kind: core.EventCancelled, Detail: map[string]any{}},
	}
	for i := range got {
		if got[i].ID == 0 || (i > 0 && got[i].ID <= got[i-1].ID) {
			t.Errorf("event ids not increasing: %d", got[i].ID)
		}
		got[i].ID = 0
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Events =\n%+v\nwant\n%+v", got, want)
	}
}

func testClaimTimeoutHop(t *testing.T, db *DB) {
	ctx := context.Background()
	show := mkShow(t, db, 1, 2)
	mustPlace(t, db, pending("O1", show.ID, 1, t0, "A-1"))
	due := t0.Add(10 * time.Minute)
	steps := []struct {
		order    string
		from, to int
		want     bool
	}{
		{"O1", 0, 1, true},
		{"O1", 0, 1, false}, // a duplicate delivery of hop 0's claim
		{"O1", 1, 2, true},
		{"O1", 1, 2, false},
		{"O1", 3, 4, false}, // not at hop 3
		{"missing", 0, 1, false},
	}
	for i, s := range steps {
		got, err := db.ClaimTimeoutHop(ctx, s.order, s.from, s.to,
			core.HopSend{DueAt: due.Add(time.Duration(i) * time.Minute), State: core.HopSending, ResendAt: t0})
		if err != nil || got != s.want {
			t.Errorf("step %d %d->%d: %v %v, want %v", i, s.from, s.to, got, err, s.want)
		}
	}
	o, _ := db.Order(ctx, "O1")
	if o.TimeoutHop != 2 || !o.TimeoutDueAt.Equal(due.Add(2*time.Minute)) {
		t.Errorf("hop %d due %v", o.TimeoutHop, o.TimeoutDueAt)
	}
	if _, err := transition(ctx, db, "O1", core.StatusCancelled, core.Transition{At: t0}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.ClaimTimeoutHop(ctx, "O1", 2, 3, core.HopSend{DueAt: due}); got || err != nil {
		t.Errorf("claim on a closed order: %v %v, want false", got, err)
	}
}

// testClaimTimeoutHops claims the hops of a batch of orders together: each
// claim wins or loses as it would alone, and confirming the won ones
// touches only the hops named.
func testClaimTimeoutHops(t *testing.T, db *DB) {
	ctx := context.Background()
	show := mkShow(t, db, 1, 4)
	for i, no := range []string{"B1", "B2", "B3"} {
		mustPlace(t, db, pending(no, show.ID, int64(i+1), t0, fmt.Sprintf("A-%d", i+1)))
	}
	if _, err := transition(ctx, db, "B3", core.StatusCancelled, core.Transition{At: t0}); err != nil {
		t.Fatal(err)
	}
	send := core.HopSend{DueAt: t0.Add(time.Minute), State: core.HopSending, ResendAt: t0.Add(core.TimeoutSendLease)}
	claims := []core.HopClaim{
		{OrderNo: "B2", From: 0, To: 1, Send: send},
		{OrderNo: "B1", From: 0, To: 1, Send: send},
		{OrderNo: "B1", From: 0, To: 1, Send: send}, // the same message twice in one batch
		{OrderNo: "B3", From: 0, To: 1, Send: send}, // ended
		{OrderNo: "missing", From: 0, To: 1, Send: send},
		{OrderNo: "B2", From: 4, To: 5, Send: send}, // not at hop 4
	}
	won, err := db.ClaimTimeoutHops(ctx, claims)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, true, false, false, false, false}; !slices.Equal(won, want) {
		t.Errorf("won %v, want %v", won, want)
	}
	if err := db.MarkTimeoutsSent(ctx, []core.HopRef{{OrderNo: "B1", Hop: 1}, {OrderNo: "B2", Hop: 7}}); err != nil {
		t.Fatal(err)
	}
	for no, want := range map[string]core.HopState{"B1": core.HopSent, "B2": core.HopSending} {
		if o, _ := db.Order(ctx, no); o.TimeoutHop != 1 || o.TimeoutSend != want {
			t.Errorf("%s: hop %d send %v, want hop 1 send %v", no, o.TimeoutHop, o.TimeoutSend, want)
		}
	}
}

// testTimeoutSend walks a hop's send through claim, a resend race, the
// confirmation, a failed send given up, and a deferral.
func testTimeoutSend(t *testing.T, db *DB) {
	ctx := context.Background()
	show := mkShow(t, db, 1, 2)
	mustPlace(t, db, pending("S1", show.ID, 1, t0, "A-1"))
	mustPlace(t, db, pending("S2", show.ID, 2, t0, "A-2"))
	lease := t0.Add(core.TimeoutSendLease)
	unsent := func(at time.Time) []string {
		t.Helper()
		os, err := db.UnsentTimeouts(ctx, at, 10)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range os {
			out = append(out, fmt.Sprintf("%s@%d/%d", o.OrderNo, o.TimeoutHop, o.TimeoutSend))
		}
		return out
	}
	if got, err := db.ClaimTimeoutHop(ctx, "S1", 0, 1, core.HopSend{DueAt: t0.Add(time.Minute), State: core.HopSending, ResendAt: lease}); !got || err != nil {
		t.Fatalf("claim: %v %v", got, err)
	}
	if got, err := db.ClaimTimeoutHop(ctx, "S2", 0, 1, core.HopSend{DueAt: t0.Add(time.Hour), State: core.HopDeferred, ResendAt: t0.Add(time.Hour)}); !got || err != nil {
		t.Fatalf("claim deferred: %v %v", got, err)
	}
	if got := unsent(lease.Add(-time.Millisecond)); got != nil {
		t.Errorf("unsent within the lease: %v, want none", got)
	}
	if got := unsent(t0.Add(time.Hour)); !slices.Equal(got, []string{"S1@1/1", "S2@1/2"}) {
		t.Errorf("unsent after both resend times: %v", got)
	}
	steps := []struct {
		name string
		at   time.Time
		hop  int
		want bool
	}{
		{"within the claimer's lease", lease.Add(-time.Millisecond), 1, false},
		{"at another hop", lease, 2, false},
		{"lease over", lease, 1, true},
		{"a second resender", lease, 1, false},
	}
	for _, s := range steps {
		got, err := db.ClaimTimeoutResend(ctx, "S1", s.hop, s.at, core.HopSend{DueAt: s.at.Add(time.Minute),
			State: core.HopSending, ResendAt: s.at.Add(core.TimeoutSendLease)})
		if err != nil || got != s.want {
			t.Errorf("resend %s: %v %v, want %v", s.name, got, err, s.want)
		}
	}
	if err := db.ReleaseTimeoutSend(ctx, "S1", 1, lease); err != nil {
		t.Fatal(err)
	}
	if got := unsent(lease); !slices.Equal(got, []string{"S1@1/1"}) {
		t.Errorf("unsent after a failed send was given up: %v", got)
	}
	if err := db.MarkTimeoutsSent(ctx, []core.HopRef{{OrderNo: "S1", Hop: 1}}); err != nil {
		t.Fatal(err)
	}
	if o, _ := db.Order(ctx, "S1"); o.TimeoutSend != core.HopSent || !o.TimeoutDueAt.Equal(lease.Add(time.Minute)) {
		t.Errorf("after confirm: send %v due %v", o.TimeoutSend, o.TimeoutDueAt)
	}
	if err := db.MarkTimeoutsSent(ctx, []core.HopRef{{OrderNo: "S2", Hop: 1}}); err != nil {
		t.Fatal(err)
	}
	if o, _ := db.Order(ctx, "S2"); o.TimeoutSend != core.HopDeferred || !o.TimeoutResendAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("a deferred hop confirmed without a send: send %v resend %v", o.TimeoutSend, o.TimeoutResendAt)
	}
	if _, err := transition(ctx, db, "S2", core.StatusCancelled, core.Transition{At: t0}); err != nil {
		t.Fatal(err)
	}
	if got := unsent(t0.Add(2 * time.Hour)); got != nil {
		t.Errorf("unsent after the deferred order ended: %v, want none", got)
	}
}

func testTakenSeats(t *testing.T, db *DB) {
	ctx := context.Background()
	show := mkShow(t, db, 2, 12)
	other := mkShow(t, db, 1, 1)
	mustPlace(t, db, pending("P", show.ID, 1, t0, "A-10", "A-2"))
	mustPlace(t, db, pending("S", show.ID, 2, t0.Add(time.Minute), "B-1"))
	mustPlace(t, db, pending("C", show.ID, 3, t0, "B-3"))
	mustPlace(t, db, pending("X", other.ID, 3, t0, "A-1"))
	if _, err := transition(ctx, db, "S", core.StatusPaid, core.Transition{At: t0, TxnID: "T"}); err != nil {
		t.Fatal(err)
	}
	// A cancelled order whose seat rows were not deleted, and a row whose
	// order is gone: both still hold their seats until reconcile.
	if _, err := transition(ctx, db, "C", core.StatusCancelled, core.Transition{At: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.X().ExecContext(ctx, `INSERT INTO order_seat (show_id, seat_id, order_no, user_id, created_at, ticket_code) VALUES (?, 'B-12', 'GONE', 9, ?, ?)`,
		show.ID, ms(t0.Add(time.Hour)), core.NewSeatCode()); err != nil {
		t.Fatal(err)
	}
	holds, err := db.TakenSeats(ctx, show.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []core.SeatHold{
		{SeatID: "A-2", State: core.SeatLocked, OrderNo: "P", UserID: 1, LockedAt: t0},
		{SeatID: "A-10", State: core.SeatLocked, OrderNo: "P", UserID: 1, LockedAt: t0},
		{SeatID: "B-1", State: core.SeatSold, OrderNo: "S", UserID: 2, LockedAt: t0.Add(time.Minute)},
		{SeatID: "B-3", State: core.SeatLocked, OrderNo: "C", UserID: 3, LockedAt: t0},
		{SeatID: "B-12", State: core.SeatLocked, OrderNo: "GONE", UserID: 9, LockedAt: t0.Add(time.Hour)},
	}
	if !reflect.DeepEqual(holds, want) {
		t.Errorf("TakenSeats =\n%+v\nwant\n%+v", holds, want)
	}
}

func testPendingOrders(t *testing.T, db *DB) {
	ctx := context.Background()
	show := mkShow(t, db, 1, 12)
	other := mkShow(t, db, 1, 12)
	// Orders Q01..Q10: later placed expire earlier, so the two sorts differ.
	for i := 1; i <= 10; i++ {
		o := pending(fmt.Sprintf("Q%02d", i), show.ID, int64(i%2), t0.Add(time.Duration(i)*time.Minute), fmt.Sprintf("A-%d", i))
		o.ExpireAt = t0.Add(time.Hour - time.Duration(i)*time.Minute)
		if i == 10 {
			o.ShowID = other.ID
		}
		mustPlace(t, db, o)
	}
	if _, err := transition(ctx, db, "Q05", core.StatusPaid, core.Transition{At: t0}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		q         PendingQuery
		want      string
		wantTotal int
	}{
		{PendingQuery{}, "Q10 Q09 Q08 Q07 Q06 Q04 Q03 Q02 Q01", 9},
		{PendingQuery{Sort: "created", Limit: 3}, "Q10 Q09 Q08", 9},
		{PendingQuery{Sort: "created", Limit: 3, Offset: 3}, "Q07 Q06 Q04", 9},
		{PendingQuery{Sort: "expire", Limit: 4, Offset: 8}, "Q01", 9},
		{PendingQuery{ShowID: show.ID, UserID: 1}, "Q09 Q07 Q03 Q01", 4},
		{PendingQuery{Search: "Q0"}, "Q09 Q08 Q07 Q06 Q04 Q03 Q02 Q01", 8},
		{PendingQuery{Search: "Q1"}, "Q10", 1},
		{PendingQuery{Search: "%"}, "", 0},
		{PendingQuery{Search: "Q_1"}, "", 0},
	}
	for _, c := range cases {
		got, total, err := db.PendingOrders(ctx, c.q)
		if err != nil {
			t.Errorf("%+v: %v", c.q, err)
			continue
		}
		nos := make([]string, len(got))
		for i, o := range got {
			nos[i] = o.OrderNo
		}
		if strings.Join(nos, " ") != c.want || total != c.wantTotal {
			t.Errorf("%+v: %v total %d; want %s total %d", c.q, nos, total, c.want, c.wantTotal)
		}
	}
	got, _, _ := db.PendingOrders(ctx, PendingQuery{Search: "Q03"})
	if len(got) != 1 || !reflect.DeepEqual(got[0].SeatIDs, []string{"A-3"}) {
		t.Errorf("pending order seats: %+v", got)
	}
	for _, q := range []PendingQuery{{Sort: "price"}, {Limit: -1}, {Offset: -1}} {
		if _, _, err := db.PendingOrders(ctx, q); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", q, err)
		}
	}
}

func testExpiredPending(t *testing.T, db *DB) {
	ctx := context.Background()
	show := mkShow(t, db, 20, 20)
	now := t0.Add(time.Hour)
	// Many closed orders and few pending ones, as in production, so the
	// planner has a reason to prefer the index.
	var want []string
	for i := range 300 {
		o := pending(fmt.Sprintf("E%03d", i), show.ID, 1, t0, DemoSeats(20, 20, 1)[i].SeatID)
		o.ExpireAt = now.Add(time.Duration(i-5) * time.Minute)
		switch {
		case i <= 5: // expire_at <= now
			want = append(want, o.OrderNo)
		case i < 10:
		default:
			o.Status, o.ClosedAt = core.StatusPaid, t0
		}
		if err := db.InTx(ctx, func(tx core.Tx) error { return tx.InsertOrder(ctx, o) }); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.ExpiredPending(ctx, now, 3)
	if err != nil || len(got) != 3 || got[0].OrderNo != "E000" || got[2].OrderNo != "E002" {
		t.Fatalf("ExpiredPending limit 3: %v %v", got, err)
	}
	got, _ = db.ExpiredPending(ctx, now, 0)
	nos := make([]string, len(got))
	for i, o := range got {
		nos[i] = o.OrderNo
	}
	if !reflect.DeepEqual(nos, want) {
		t.Errorf("ExpiredPending = %v, want %v (expire_at == now included)", nos, want)
	}
	if plan := explain(t, db, expiredPendingSQL, ms(now), 100); !strings.Contains(plan, "idx_status_expire") {
		t.Errorf("ExpiredPending plan does not use idx_status_expire:\n%s", plan)
	}
}

// explain returns the query plan of q as text: MySQL's EXPLAIN key column,
// SQLite's EXPLAIN QUERY PLAN details.
func explain(t *testing.T, db *DB, q string, args ...any) string {
	t.Helper()
	ctx := context.Background()
	if db.Dialect() == MySQL {
		rows, err := db.X().QueryxContext(ctx, "EXPLAIN "+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var keys []string
		for rows.Next() {
			m := map[string]any{}
			if err := rows.MapScan(m); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, fmt.Sprintf("key=%s", m["key"]))
		}
		return strings.Join(keys, "\n")
	}
	rows, err := db.X().QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, notUsed int
		var detail string
		if err := rows.Scan(&id, &parent, &notUsed, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	return strings.Join(lines, "\n")
}

func testDiscrepancies(t *testing.T, db *DB) {
	ctx := context.Background()
	ds := []core.Discrepancy{
		{OrderNo: "O1", TxnID: "T1", Kind: core.DiscrepancyPaidAfterCancel, AmountCents: 100, CreatedAt: t0, Note: "late"},
		{OrderNo: "O2", TxnID: "T2", Kind: core.DiscrepancyAmountMismatch, AmountCents: 5, CreatedAt: t0.Add(time.Minute)},
		{OrderNo: "O1", TxnID: "T1", Kind: core.DiscrepancyPaidAfterCancel, AmountCents: 100, CreatedAt: t0}, // same money again
	}
	err := db.InTx(ctx, func(tx core.Tx) error {
		for _, d := range ds {
			if err := tx.InsertDiscrepancy(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	open, err := db.Discrepancies(ctx, DiscrepancyOpen, 10, 0)
	if err != nil || len(open) != 2 || open[0].TxnID != "T2" || open[1].Note != "late" || open[1].Status != DiscrepancyOpen {
		t.Fatalf("open discrepancies: %+v %v", open, err)
	}
	// Resolving is the case workflow's (discrepancy_cases.go): a final state.
	resolvedAt := t0.Add(time.Hour)
	cases := core.NewCases(db, fixedClock(resolvedAt))
	for _, to := range []core.CaseState{core.CaseRefundRequested, core.CaseRefunded} {
		if _, err := cases.Move(ctx, open[1].ID, to, "staff:ann", "refunded", nil); err != nil {
			t.Fatalf("move to %s: %v", to, err)
		}
	}
	resolved, _ := db.Discrepancies(ctx, DiscrepancyResolved, 10, 0)
	want := core.Discrepancy{ID: open[1].ID, OrderNo: "O1", TxnID: "T1", Kind: core.DiscrepancyPaidAfterCancel,
		AmountCents: 100, CreatedAt: t0, Status: DiscrepancyResolved, ResolvedAt: resolvedAt, ResolvedBy: "staff:ann", Note: "refunded"}
	if len(resolved) != 1 || resolved[0] != want {
		t.Errorf("resolved = %+v, want %+v", resolved, want)
	}
	all, _ := db.Discrepancies(ctx, "", 1, 1)
	if len(all) != 1 || all[0].ID != open[1].ID {
		t.Errorf("all, page 2 of size 1: %+v", all)
	}
	if _, err := db.Discrepancies(ctx, "bogus", 10, 0); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("bad status: %v", err)
	}
}

func testOrderCounts(t *testing.T, db *DB) {
	ctx := context.Background()
	show := mkShow(t, db, 1, 12)
	since := t0.Add(time.Hour)
	type step struct {
		no     string
		placed time.Time
		to     core.OrderStatus
		tr     core.Transition
	}
	steps := []step{
		{"old-pending", t0, core.StatusPending, core.Transition{}},
		{"new-pending", since, core.StatusPending, core.Transition{}},
		{"old-paid-now", t0, core.StatusPaid, core.Transition{At: since.Add(time.Minute)}},
		{"paid-before", t0, core.StatusPaid, core.Transition{At: since.Add(-time.Minute)}},
		{"new-cancelled", since, core.StatusCancelled, core.Transition{At: since, Reason: core.ReasonCustomer}},
		{"new-expired", since, core.StatusCancelled, core.Transition{At: since, Reason: core.ReasonTimeout}},
		{"new-expired-2", since, core.StatusCancelled, core.Transition{At: since, Reason: core.ReasonTimeout}},
	}
	for i, s := range steps {
		mustPlace(t, db, pending(s.no, show.ID, 1, s.placed, fmt.Sprintf("A-%d", i+1)))
		if s.to != core.StatusPending {
			if _, err := transition(ctx, db, s.no, s.to, s.tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := db.OrderCounts(ctx, since)
	want := map[string]int{"pending": 2, "placed": 4, "paid": 1, "cancelled": 1, "expired": 2}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("OrderCounts = %v %v, want %v", got, err, want)
	}
}

func testOrphanSeats(t *testing.T, db *DB) {
	ctx := context.Background()
	show := mkShow(t, db, 2, 12)
	mustPlace(t, db, pending("P", show.ID, 1, t0, "A-1"))
	mustPlace(t, db, pending("C", show.ID, 3, t0, "B-3"))
	if _, err := transition(ctx, db, "C", core.StatusCancelled, core.Transition{At: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.X().ExecContext(ctx, `INSERT INTO order_seat (show_id, seat_id, order_no, user_id, created_at, ticket_code) VALUES (?, 'B-12', 'GONE', 9, 0, ?)`,
		show.ID, core.NewSeatCode()); err != nil {
		t.Fatal(err)
	}
	want := []OrphanSeat{
		{ShowID: show.ID, SeatID: "B-12", OrderNo: "GONE", UserID: 9, Missing: true},
		{ShowID: show.ID, SeatID: "B-3", OrderNo: "C", UserID: 3},
	}
	steps := []struct {
		s    OrphanSeat
		want bool
	}{
		{OrphanSeat{ShowID: show.ID, SeatID: "A-1", OrderNo: "P"}, false}, // live order
		{OrphanSeat{ShowID: show.ID, SeatID: "B-3", OrderNo: "other"}, false},
		{want[1], true},
		{want[1], false},
		{want[0], true},
	}
	for i, s := range steps {
		if ok, err := db.DeleteOrphanSeat(ctx, s.s); ok != s.want || err != nil {
			t.Errorf("step %d delete %+v: %v %v, want %v", i, s.s, ok, err, s.want)
		}
	}
	holds, _ := db.TakenSeats(ctx, show.ID)
	if seatIDsOf(holds) != "A-1:locked:P" {
		t.Errorf("taken after reconcile: %s", seatIDsOf(holds))
	}
}

// fixedClock is a clock stopped at one instant.
type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }
