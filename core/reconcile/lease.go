package reconcile

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"seatflow/core/store"
)

// The lease keeps reconcile to one instance at a time across a cluster.
//
// It is a row in the database (reconcile_lease), not a Redis key: the
// embedded Redis never expires keys by wall time, so a Redis lease of a dead
// holder would never lapse there, while the DB works the same on SQLite and
// MySQL. The expiry is written with the database's clock, so instances with
// skewed clocks agree on it; taking it is one conditional UPDATE (... WHERE
// expires_at < now), so two instances can never both win.
//
// A holder renews the lease every TTL/3. A holder that dies stops renewing
// and the lease lapses after at most TTL. A holder that cannot renew (lost
// the database, or was paused longer than the TTL) cancels its own run when
// its local deadline passes: the deadline is measured on its monotonic clock
// from the moment it *sent* the last successful acquire or renew, which is
// never later than the expiry the database wrote, so by the time another
// instance can take the lease the old holder's run context is already done.
// What a cancelled run had in flight is a conditional write (a CAS in Lua
// or SQL), harmless if it lands; and every check is safe to repeat.

// leaseName is the one lease row reconcile uses (seeded by the migration).
const leaseName = "reconcile"

// ErrLeaseLost is the cause of a run's context ending because its lease
// could not be renewed in time.
var ErrLeaseLost = errors.New("reconcile: lease lost")

// heldLease is a lease this instance holds, with the goroutine renewing it.
type heldLease struct {
	db     *store.DB
	token  string
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// acquireLease takes the lease for owner. ok is false when another instance
// holds it. While held, ctx (the returned one) is cancelled with
// ErrLeaseLost if renewal fails; release ends it.
func acquireLease(ctx context.Context, db *store.DB, owner string, ttl time.Duration, log *slog.Logger) (*heldLease, context.Context, bool, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	sent := time.Now()
	ok, err := db.AcquireLease(ctx, leaseName, owner, token, ttl)
	if err != nil {
		// A cancel can land after the UPDATE committed but before its reply:
		// give back what we may hold, or it blocks every instance for ttl.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if rerr := db.ReleaseLease(rctx, leaseName, token); rerr != nil {
			log.Warn("giving back a lease that may have been taken", "err", rerr)
		}
		return nil, nil, false, err
	}
	if !ok {
		return nil, nil, false, nil
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	l := &heldLease{db: db, token: token, cancel: cancel, done: make(chan struct{})}
	go l.keep(runCtx, ttl, sent.Add(ttl), log)
	return l, runCtx, true, nil
}

// keep renews the lease every ttl/3 until ctx ends, and ends ctx itself
// when deadline passes without a successful renewal.
func (l *heldLease) keep(ctx context.Context, ttl time.Duration, deadline time.Time, log *slog.Logger) {
	defer close(l.done)
	renew := time.NewTimer(ttl / 3)
	defer renew.Stop()
	expire := time.NewTimer(time.Until(deadline))
	defer expire.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-expire.C:
			log.Error("reconcile lease not renewed in time; stopping the run")
			l.cancel(ErrLeaseLost)
			return
		case <-renew.C:
			sent := time.Now()
			rctx, cancel := context.WithDeadline(ctx, deadline)
			ok, err := l.db.RenewLease(rctx, leaseName, l.token, ttl)
			cancel()
			switch {
			case err != nil:
				// Try again soon; the deadline decides when to give up.
				log.Warn("renewing the reconcile lease", "err", err)
				renew.Reset(ttl / 10)
			case !ok:
				log.Error("reconcile lease taken over; stopping the run")
				l.cancel(fmt.Errorf("%w: taken over", ErrLeaseLost))
				return
			default:
				deadline = sent.Add(ttl)
				expire.Reset(time.Until(deadline))
				renew.Reset(ttl / 3)
			}
		}
	}
}

// release stops renewing and frees the lease for the next run.
func (l *heldLease) release(ctx context.Context) error {
	l.cancel(nil)
	<-l.done
	return l.db.ReleaseLease(context.WithoutCancel(ctx), leaseName, l.token)
}
