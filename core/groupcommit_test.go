package core_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"seatflow/core"
	"seatflow/core/stacktest"
	"seatflow/core/store"
)

// gatedStore holds the first core.PlaceWriters transactions (holdN, if
// set) until opened, so every write started meanwhile queues for the
// writers and the batch after them holds all of them.
type gatedStore struct {
	core.Store
	gate  chan struct{}
	holdN int
	mu    sync.Mutex
	held  int
	inTx  func(core.Tx) core.Tx // wraps the batch's Tx (fault injection); nil: as is
}

func (s *gatedStore) InTx(ctx context.Context, fn func(core.Tx) error) error {
	s.mu.Lock()
	hold := s.held < cmp.Or(s.holdN, core.PlaceWriters)
	if hold {
		s.held++
	}
	wrap := s.inTx
	s.mu.Unlock()
	if hold {
		<-s.gate
		return s.Store.InTx(ctx, fn)
	}
	return s.Store.InTx(ctx, func(tx core.Tx) error {
		if wrap != nil {
			tx = wrap(tx)
		}
		return fn(tx)
	})
}

// permissiveSeats says yes to every lock, as a seat store that lost its
// state would: the DB's unique seat index must be the one to refuse.
type permissiveSeats struct{ core.SeatStore }

func (permissiveSeats) Lock(context.Context, int64, int64, string, []string, int, time.Time) error {
	return nil
}

// inOneBatch runs the n plugs one at a time, each until the gated store
// holds its transaction (plugs queued together would share a batch and
// leave a writer free), so every writer is busy; then the m requests,
// until queued says all of them wait for a writer; then opens the gate,
// so they are written in one batch, and waits for everything.
func inOneBatch(t *testing.T, gs *gatedStore, queued func() int, n int, plug func(i int), m int, req func(i int)) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { plug(i) })
		for gs.heldNow() <= i {
			if time.Now().After(deadline) {
				t.Fatalf("plug %d never reached the store", i)
			}
			time.Sleep(time.Millisecond)
		}
	}
	for i := range m {
		wg.Go(func() { req(i) })
	}
	for queued() < m {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d requests queued", queued(), m)
		}
		time.Sleep(time.Millisecond)
	}
	close(gs.gate)
	wg.Wait()
}

// placeInOneBatch places reqs so that they are written in one group-commit
// batch: the writers are busy with one plug order each (seats plugSeats)
// until every request waits in the queue.
func placeInOneBatch(t *testing.T, eng *core.Engine, gs *gatedStore, showID int64, plugSeats []string, reqs []core.PlaceRequest) []error {
	t.Helper()
	ctx := context.Background()
	errs := make([]error, len(reqs))
	inOneBatch(t, gs, func() int { return core.PlaceQueueLen(eng) },
		core.PlaceWriters, func(i int) {
			if _, err := eng.Place(ctx, core.PlaceRequest{UserID: 900 + int64(i), ShowID: showID, SeatIDs: plugSeats[i : i+1]}); err != nil {
				t.Errorf("plug order: %v", err)
			}
		},
		len(reqs), func(i int) { _, errs[i] = eng.Place(ctx, reqs[i]) })
	return errs
}

// batchFigures reads writer's group-commit metrics: the transactions its
// batches took, the jobs in them, and the batches sent back to one by one
// (whose jobs it does not count).
func batchFigures(t *testing.T, m *core.Metrics, writer string) (batches uint64, jobs, fallbacks float64) {
	t.Helper()
	var h dto.Metric
	if err := m.GroupCommitBatch.WithLabelValues(writer).(prometheus.Histogram).Write(&h); err != nil {
		t.Fatal(err)
	}
	return h.Histogram.GetSampleCount(), h.Histogram.GetSampleSum(), testutil.ToFloat64(m.GroupCommitFallbacks.WithLabelValues(writer))
}

// wantOneBatch checks that writer wrote the plugs alone, then the n
// requests in one transaction, with no batch sent back to one by one.
func wantOneBatch(t *testing.T, m *core.Metrics, writer string, plugs, n int) {
	t.Helper()
	if batches, jobs, fallbacks := batchFigures(t, m, writer); fallbacks != 0 || batches != uint64(plugs)+1 || jobs != float64(plugs+n) {
		t.Errorf("%s batches: %d transactions of %v jobs in all, %v fallbacks; want %d of %d, none",
			writer, batches, jobs, fallbacks, plugs+1, plugs+n)
	}
}

func (s *gatedStore) heldNow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// ordersOf returns the numbers of the user's orders of the show in the DB.
func ordersOf(t *testing.T, st *stacktest.Stack, showID, user int64) []string {
	t.Helper()
	var nos []string
	if err := st.DB.X().Select(&nos, st.DB.X().Rebind(`SELECT order_no FROM order_info WHERE show_id = ? AND user_id = ?`), showID, user); err != nil {
		t.Fatal(err)
	}
	return nos
}

// killOpenTransactions kills the MariaDB connection of every transaction
// open in the stack's database: the batch's, right before its commit. On
// SQLite, whose one connection is in-process, it fails the statement
// instead, as a dead connection would.
func killOpenTransactions(ctx context.Context, st *stacktest.Stack) error {
	if st.DB.Dialect() == store.SQLite {
		return errors.New("injected: connection lost before commit")
	}
	// The plugs' transactions may still be committing beside the batch.
	var ids []int64
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(time.Millisecond) {
		ids = ids[:0]
		if err := st.DB.X().SelectContext(ctx, &ids, `SELECT t.trx_mysql_thread_id FROM information_schema.innodb_trx t
 JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id WHERE p.db = DATABASE()`); err != nil {
			return err
		}
		if len(ids) == 1 || time.Now().After(deadline) {
			break
		}
	}
	if len(ids) != 1 {
		return fmt.Errorf("%d transactions open, want the batch's alone", len(ids))
	}
	_, err := st.DB.X().ExecContext(ctx, fmt.Sprintf("KILL %d", ids[0]))
	return err
}

// TestGroupCommitOverlappingSeats is issue 14's race: 64 placements for
// overlapping seats land in one batch while the seat store says yes to all
// of them. The batch's seat insert breaks the unique index, the batch is
// written order by order: exactly one winner per seat, the losers get 409
// and leave nothing behind.
func TestGroupCommitOverlappingSeats(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		show := st.NewShow(t, 4, 10)
		gs := &gatedStore{Store: st.DB, gate: make(chan struct{})}
		metrics := core.NewMetrics(nil)
		eng, err := core.NewEngine(core.Config{HoldTTL: time.Minute, Delay: core.DefaultDelayPolicy()},
			core.Deps{Store: gs, Seats: permissiveSeats{st.Seats}, Queue: st.Queue, Metrics: metrics})
		if err != nil {
			t.Fatal(err)
		}
		pool := []string{"A-1", "A-2", "A-3", "A-4", "A-5", "A-6", "A-7", "A-8"}
		rng := rand.New(rand.NewPCG(1, 2))
		reqs := make([]core.PlaceRequest, 64)
		for i := range reqs {
			a, b := rng.IntN(len(pool)), rng.IntN(len(pool)-1)
			if b >= a {
				b++
			}
			reqs[i] = core.PlaceRequest{UserID: int64(i + 1), ShowID: show.ID, SeatIDs: []string{pool[a], pool[b]}}
		}
		errs := placeInOneBatch(t, eng, gs, show.ID, []string{"D-1", "D-2", "D-3", "D-4"}, reqs)

		if got := testutil.ToFloat64(metrics.GroupCommitFallbacks.WithLabelValues(core.WriterPlace)); got != 1 {
			t.Fatalf("%v batches fell back to one by one, want the one batch of 64", got)
		}
		owner := map[string]string{}
		won := 0
		ctx := context.Background()
		for i, r := range reqs {
			nos := ordersOf(t, st, show.ID, r.UserID)
			switch {
			case errs[i] == nil:
				won++
				if len(nos) != 1 {
					t.Fatalf("winner %d has %d orders", r.UserID, len(nos))
				}
				for _, s := range r.SeatIDs {
					if prev, ok := owner[s]; ok {
						t.Errorf("seat %s won by %s and %s", s, prev, nos[0])
					}
					owner[s] = nos[0]
				}
			case errors.Is(errs[i], core.ErrSeatUnavailable) && core.ErrorKind(errs[i]) == core.KindConflict:
				if len(nos) != 0 {
					t.Errorf("loser %d left orders %+v", r.UserID, nos)
				}
			default:
				t.Errorf("request %d: %v, want placed or seat_unavailable", i, errs[i])
			}
		}
		if won == 0 {
			t.Fatal("no placement won")
		}
		taken, err := st.DB.TakenSeats(ctx, show.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range taken {
			if h.SeatID[0] == 'D' {
				continue
			}
			if owner[h.SeatID] != h.OrderNo {
				t.Errorf("seat %s held by %s in the DB, the winner was %q", h.SeatID, h.OrderNo, owner[h.SeatID])
			}
		}
		if len(taken)-core.PlaceWriters != len(owner) {
			t.Errorf("%d seats taken in the DB, the winners hold %d", len(taken)-core.PlaceWriters, len(owner))
		}
		t.Logf("%d of 64 placements won %d of %d seats", won, len(owner), len(pool))
	})
}

// faultTx breaks one step of the batch's transaction.
type faultTx struct {
	core.Tx
	beforeEvents func() error // runs before the batch's event insert, the last statement before commit
}

// SQL lets the DB queue's outbox write in the wrapped transaction, so the
// fault stays where it is injected.
func (f faultTx) SQL() *sqlx.Tx { return f.Tx.(interface{ SQL() *sqlx.Tx }).SQL() }

func (f faultTx) AddEvents(ctx context.Context, evs []core.Event) error {
	if err := f.beforeEvents(); err != nil {
		return err
	}
	return f.Tx.AddEvents(ctx, evs)
}

// TestGroupCommitFaultInBatch injects a fault in the middle of a batch of
// 16 orders: every order of the batch must end up either committed with
// its timeout message sent, or not written with its seats free in the
// seat store.
func TestGroupCommitFaultInBatch(t *testing.T) {
	cases := []struct {
		name string
		// taken: a seat of the batch's first order already has an
		// order_seat row the seat store does not know of.
		taken bool
		// kill: the batch's connection dies before its commit.
		kill      bool
		wantPlace int
	}{
		{name: "constraint violation on one order", taken: true, wantPlace: 15},
		{name: "connection killed before commit", kill: true, wantPlace: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
				ctx := context.Background()
				show := st.NewShow(t, 4, 16)
				gs := &gatedStore{Store: st.DB, gate: make(chan struct{})}
				metrics := core.NewMetrics(nil)
				eng, err := core.NewEngine(core.Config{HoldTTL: time.Minute, Delay: core.DefaultDelayPolicy()},
					core.Deps{Store: gs, Seats: st.Seats, Queue: st.Queue, Metrics: metrics})
				if err != nil {
					t.Fatal(err)
				}
				if tc.taken {
					// An order the DB has and the seat store lost.
					direct := st.Engine(t, core.Config{HoldTTL: time.Minute}, nil)
					lost, err := direct.Place(ctx, core.PlaceRequest{UserID: 500, ShowID: show.ID, SeatIDs: []string{"A-1"}})
					if err != nil {
						t.Fatal(err)
					}
					if _, err := st.Seats.Release(ctx, show.ID, 500, lost.OrderNo, []string{"A-1"}); err != nil {
						t.Fatal(err)
					}
				}
				if tc.kill {
					gs.inTx = func(tx core.Tx) core.Tx {
						return faultTx{Tx: tx, beforeEvents: func() error { return killOpenTransactions(ctx, st) }}
					}
				}
				reqs := make([]core.PlaceRequest, 16)
				for i := range reqs {
					reqs[i] = core.PlaceRequest{UserID: int64(i + 1), ShowID: show.ID, SeatIDs: []string{fmt.Sprintf("A-%d", i+1)}}
				}
				errs := placeInOneBatch(t, eng, gs, show.ID, []string{"D-1", "D-2", "D-3", "D-4"}, reqs)
				placed := 0
				for i, r := range reqs {
					nos := ordersOf(t, st, show.ID, r.UserID)
					state := seatState(t, st, show.ID, r.SeatIDs[0])
					if errs[i] == nil {
						placed++
						if len(nos) != 1 || state != core.SeatLocked {
							t.Errorf("order %d placed but %d orders in the DB, seat %v", i, len(nos), state)
							continue
						}
						_, evs, err := eng.Order(ctx, nos[0])
						if err != nil {
							t.Fatal(err)
						}
						if !hasEvent(evs, core.EventTimeoutScheduled) {
							t.Errorf("order %d placed without its timeout message: %+v", i, evs)
						}
						continue
					}
					if len(nos) != 0 {
						t.Errorf("order %d failed (%v) but is in the DB", i, errs[i])
					}
					if want := core.SeatAvailable; state != want && !(tc.taken && i == 0) {
						t.Errorf("order %d failed (%v) but its seat is %v in the seat store", i, errs[i], state)
					}
				}
				if got, want := testutil.ToFloat64(metrics.GroupCommitFallbacks.WithLabelValues(core.WriterPlace)), map[bool]float64{true: 1}[tc.taken]; got != want {
					t.Errorf("%v batches written one by one, want %v", got, want)
				}
				if placed != tc.wantPlace {
					t.Errorf("%d of 16 placed, want %d (errors %v)", placed, tc.wantPlace, errs)
				}
			})
		})
	}
}

func hasEvent(evs []core.Event, kind string) bool {
	for _, e := range evs {
		if e.Kind == kind {
			return true
		}
	}
	return false
}

func seatState(t *testing.T, st *stacktest.Stack, showID int64, seat string) core.SeatState {
	t.Helper()
	holds, err := st.Seats.Holds(context.Background(), showID)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range holds {
		if h.SeatID == seat {
			return h.State
		}
	}
	return core.SeatAvailable
}
