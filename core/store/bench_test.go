package store

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"seatflow/core"
)

// BenchmarkPlaceCancel measures one placement transaction (order, 2 seats,
// event) followed by one cancel transaction (transition, delete seats,
// event): the engine's write path, run from parallel goroutines.
func BenchmarkPlaceCancel(b *testing.B) {
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			db := be.open(b)
			ctx := context.Background()
			const rows, cols = 50, 100 // seats cycle; only a few are held at once
			show, err := db.CreateShow(ctx, core.Show{Name: "bench"}, DemoSeats(rows, cols, 100))
			if err != nil {
				b.Fatal(err)
			}
			var next atomic.Int64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := next.Add(1)
					s := int(i*2) % (rows * cols)
					o := pending(fmt.Sprint("B", i), show.ID, i, t0,
						fmt.Sprintf("%s-%d", RowName(s/cols+1), s%cols+1), fmt.Sprintf("%s-%d", RowName(s/cols+1), s%cols+2))
					if err := db.InTx(ctx, func(tx core.Tx) error {
						if err := tx.InsertOrder(ctx, o); err != nil {
							return err
						}
						if err := tx.InsertOrderSeats(ctx, o); err != nil {
							return err
						}
						return tx.AddEvent(ctx, core.Event{OrderNo: o.OrderNo, At: t0, Kind: core.EventPlaced})
					}); err != nil {
						b.Error(err)
						return
					}
					if err := db.InTx(ctx, func(tx core.Tx) error {
						if _, err := tx.TransitionPending(ctx, o.OrderNo, core.StatusCancelled, core.Transition{At: t0}); err != nil {
							return err
						}
						if _, err := tx.DeleteOrderSeats(ctx, o.OrderNo); err != nil {
							return err
						}
						return tx.AddEvent(ctx, core.Event{OrderNo: o.OrderNo, At: t0, Kind: core.EventCancelled})
					}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkSQLiteCommitDurability is one payment-sized commit on a SQLite
// file with synchronous FULL (the default: a commit survives power loss)
// and NORMAL (what it was: the last commits may roll back), so the cost of
// durability is a ratio of the two.
func BenchmarkSQLiteCommitDurability(b *testing.B) {
	for _, mode := range []string{"FULL", "NORMAL"} {
		b.Run(mode, func(b *testing.B) {
			dsn := "sqlite://" + filepath.Join(b.TempDir(), "bench.db")
			if mode != "FULL" {
				dsn += "?_pragma=synchronous(" + mode + ")"
			}
			db, err := Open(context.Background(), dsn)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = db.Close() })
			if err := db.Migrate(context.Background()); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				if err := db.InTx(ctx, func(tx core.Tx) error {
					_, err := tx.InsertPayment(ctx, core.Payment{TxnID: fmt.Sprint("T", i), OrderNo: "SF1", AmountCents: 100, PaidAt: t0, ReceivedAt: t0})
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
