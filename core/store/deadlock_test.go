package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-sql-driver/mysql"

	"seatflow/core"
)

// Two transactions lock two orders in opposite order, each waiting for the
// other to hold its first lock: a real InnoDB deadlock. InTx must run the
// victim again, so both calls succeed and each writes its event exactly once
// (the victim's first attempt rolled back).
func TestInTxRetriesRealDeadlock(t *testing.T) {
	db := openTestMySQL(t)
	ctx := context.Background()
	show := mkShow(t, db, 1, 2)
	mustPlace(t, db, pending("DL1", show.ID, 1, t0, "A-1"))
	mustPlace(t, db, pending("DL2", show.ID, 2, t0, "A-2"))

	var (
		bothLocked sync.WaitGroup
		attempts   atomic.Int32
		deadlocks  atomic.Int32
	)
	bothLocked.Add(2)
	lockBoth := func(first, second, kind string) error {
		var once sync.Once
		return db.InTx(ctx, func(tx core.Tx) error {
			attempts.Add(1)
			if _, err := tx.OrderForUpdate(ctx, first); err != nil {
				return err
			}
			if err := tx.AddEvent(ctx, core.Event{OrderNo: first, At: t0, Kind: kind}); err != nil {
				return err
			}
			once.Do(func() { bothLocked.Done(); bothLocked.Wait() }) // first attempt only
			_, err := tx.OrderForUpdate(ctx, second)
			var me *mysql.MySQLError
			if errors.As(err, &me) && me.Number == mysqlDeadlock {
				deadlocks.Add(1)
			}
			return err
		})
	}
	errs := make(chan error, 2)
	go func() { errs <- lockBoth("DL1", "DL2", "deadlock_a") }()
	go func() { errs <- lockBoth("DL2", "DL1", "deadlock_b") }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("InTx gave up on a deadlock: %v", err)
		}
	}
	if d := deadlocks.Load(); d != 1 {
		t.Fatalf("%d deadlocks seen, want 1: the test did not provoke one", d)
	}
	if a := attempts.Load(); a != 3 {
		t.Errorf("%d attempts, want 3 (two first tries and one retry of the victim)", a)
	}
	for no, kind := range map[string]string{"DL1": "deadlock_a", "DL2": "deadlock_b"} {
		if n := count(t, db, "SELECT COUNT(*) FROM order_event WHERE order_no=? AND kind=?", no, kind); n != 1 {
			t.Errorf("order %s has %d %s events, want 1", no, n, kind)
		}
	}
}
