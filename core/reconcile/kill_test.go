package reconcile_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/core/seats"
	"seatflow/core/stacktest"
	"seatflow/core/store"
	"seatflow/core/testenv"
)

// The child process of TestFaultProcessKilled is this test binary run with
// these variables set; it runs TestKillChild only.
const (
	childDSNVar   = "SEATFLOW_KILL_CHILD_DSN"
	childRedisVar = "SEATFLOW_KILL_CHILD_REDIS"
	childShowVar  = "SEATFLOW_KILL_CHILD_SHOW"
	releasingLine = "RELEASING "
)

// TestFaultProcessKilled: a real child process places an order and cancels
// it; the cancel commits and the child is killed with SIGKILL before its
// seat release runs. The seats stay locked for a cancelled order until
// reconcile frees them — and not before the grace period.
func TestFaultProcessKilled(t *testing.T) {
	for _, kind := range []string{"embedded", "real"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			dsn, redisURL := childStack(t, kind)
			db, err := store.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			client, err := seats.Dial(ctx, redisURL)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { client.Close() })
			f := newFixture(t, &stacktest.Stack{Name: kind, DB: db, Redis: client, Seats: seats.New(client), Queue: nopQueue{}})

			cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.v")
			cmd.Env = append(os.Environ(), childDSNVar+"="+dsn, childRedisVar+"="+redisURL,
				childShowVar+"="+strconv.FormatInt(f.show.ID, 10))
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			orderNo := ""
			lines := bufio.NewScanner(out)
			for orderNo == "" && lines.Scan() {
				if no, ok := strings.CutPrefix(lines.Text(), releasingLine); ok {
					orderNo = no
				}
			}
			if err := cmd.Process.Kill(); err != nil { // SIGKILL: no deferred code runs
				t.Fatal(err)
			}
			err = cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child: %v, want killed by SIGKILL", err)
			}
			if orderNo == "" {
				t.Fatal("the child never reached the seat release")
			}

			o, err := db.Order(ctx, orderNo)
			if err != nil || o.Status != core.StatusCancelled {
				t.Fatalf("order after the kill: %+v %v, want cancelled (the commit happened)", o, err)
			}
			f.wantSeat(t, "A-1", core.SeatLocked, orderNo) // the release never ran

			// The child placed by the wall clock; ours catches up with it.
			f.clock.Advance(time.Since(f.clock.Now()))
			wantCounts(t, f.run(t), nil) // younger than the grace period
			f.clock.Advance(grace + time.Second)
			run := f.run(t)
			wantCounts(t, run, map[string][2]int{reconcile.CheckStaleRedisLock: {2, 2}})
			f.wantSeat(t, "A-1", core.SeatAvailable, "")
			f.wantRepaired(t, orderNo, reconcile.CheckStaleRedisLock)
			f.checkInvariants(t)
		})
	}
}

// TestKillChild is the child of TestFaultProcessKilled; it does nothing
// unless run by it.
func TestKillChild(t *testing.T) {
	dsn := os.Getenv(childDSNVar)
	if dsn == "" {
		t.Skip("the child process of TestFaultProcessKilled")
	}
	ctx := context.Background()
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	client, err := seats.Dial(ctx, os.Getenv(childRedisVar))
	if err != nil {
		t.Fatal(err)
	}
	show, err := strconv.ParseInt(os.Getenv(childShowVar), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := core.NewEngine(core.Config{HoldTTL: holdTTL, Delay: core.DefaultDelayPolicy()},
		core.Deps{Store: db, Seats: hangingRelease{seats.New(client)}, Queue: nopQueue{}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: show, SeatIDs: []string{"A-1", "A-2"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = eng.Cancel(ctx, o.OrderNo, 1)
	t.Fatalf("cancel returned (%v): the release should have hung until the kill", err)
}

// hangingRelease announces the release (the cancel has committed) and
// never returns, so the parent kills the process exactly there.
type hangingRelease struct{ core.SeatStore }

func (hangingRelease) Release(_ context.Context, _, _ int64, orderNo string, _ []string) (int, error) {
	fmt.Println(releasingLine + orderNo)
	select {}
}

// nopQueue accepts timeout messages and never delivers them.
type nopQueue struct{}

func (nopQueue) Send(context.Context, []core.TimeoutMsg, int, time.Duration) error { return nil }
func (nopQueue) Consume(context.Context, core.TimeoutHandler) error                { return nil }
func (nopQueue) Ping(context.Context) error                                        { return nil }
func (nopQueue) Close() error                                                      { return nil }

// childStack returns a migrated database and a seat store that a child
// process can open too: a SQLite file and an in-process Redis of this test,
// or a fresh MariaDB database and the real Redis (with show ids of its own).
func childStack(t *testing.T, kind string) (dsn, redisURL string) {
	t.Helper()
	ctx := context.Background()
	if kind == "embedded" {
		emb, err := testenv.StartEmbeddedRedis()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(emb.Close)
		dsn = "sqlite://" + filepath.Join(t.TempDir(), "seatflow.db")
		redisURL = emb.URL()
	} else {
		dsn, redisURL = testenv.NewMySQLDatabase(t), testenv.Redis(t)
	}
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if kind != "embedded" {
		base, _ := rand.Int(rand.Reader, big.NewInt(1<<40))
		if _, err := db.X().ExecContext(ctx, fmt.Sprintf("ALTER TABLE show_info AUTO_INCREMENT = %d", base.Int64()+1000)); err != nil {
			t.Fatal(err)
		}
	}
	return dsn, redisURL
}
