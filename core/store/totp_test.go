package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
)

// TestTOTPFactor: an offer is confirmed once, a confirmed factor is not
// replaced by a new offer, a step is accepted once, and deleting removes it.
func TestTOTPFactor(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		ann := mkStaffWithSessions(t, db, "ann")
		audit := &core.AuditEntry{At: t0, Staff: "ann", Action: access.AuditTOTPEnable}
		if _, ok, err := db.TOTP(ctx, ann.ID); ok || err != nil {
			t.Fatalf("before any offer: %t %v", ok, err)
		}
		for _, secret := range []string{"FIRST", "SECOND"} { // a second offer replaces the first
			if err := db.OfferTOTP(ctx, ann.ID, secret, t0); err != nil {
				t.Fatal(err)
			}
		}
		f, ok, err := db.TOTP(ctx, ann.ID)
		if !ok || err != nil || f.Secret != "SECOND" || f.Confirmed() {
			t.Fatalf("offer: %+v %t %v", f, ok, err)
		}
		if won, err := db.UseTOTPStep(ctx, ann.ID, 100, false, t0, nil); won || err != nil {
			t.Fatalf("a login code against an unconfirmed offer: %t %v", won, err)
		}
		if won, err := db.UseTOTPStep(ctx, ann.ID, 100, true, t0, audit); !won || err != nil {
			t.Fatalf("confirm: %t %v", won, err)
		}
		if err := db.OfferTOTP(ctx, ann.ID, "THIRD", t0); !errors.Is(err, access.ErrTOTPEnrolled) {
			t.Fatalf("offer over a confirmed factor: %v", err)
		}
		steps := []struct {
			step int64
			won  bool
		}{{100, false}, {99, false}, {101, true}, {101, false}, {103, true}}
		for _, s := range steps {
			if won, err := db.UseTOTPStep(ctx, ann.ID, s.step, false, t0, nil); won != s.won || err != nil {
				t.Errorf("step %d: %t %v, want %t", s.step, won, err, s.won)
			}
		}
		enrolled, err := db.TOTPEnrolled(ctx)
		if err != nil || !enrolled[ann.ID] {
			t.Fatalf("enrolled %v %v", enrolled, err)
		}
		if had, err := db.DeleteTOTP(ctx, ann.ID, core.AuditEntry{At: t0, Action: access.AuditTOTPDisable}); !had || err != nil {
			t.Fatalf("delete: %t %v", had, err)
		}
		if had, _ := db.DeleteTOTP(ctx, ann.ID, core.AuditEntry{At: t0, Action: access.AuditTOTPDisable}); had {
			t.Error("second delete found a factor")
		}
		if n := len(auditActions(t, db, access.AuditTOTPEnable)); n != 1 {
			t.Errorf("%d enable audit lines, want 1", n)
		}
		if n := len(auditActions(t, db, access.AuditTOTPDisable)); n != 1 {
			t.Errorf("%d disable audit lines, want 1 (not for the delete that found nothing)", n)
		}
	})
}

func TestLoginChallenge(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		if err := db.CreateLoginChallenge(ctx, "c1", LoginChallenge{StaffID: 7, Next: "/console/orders"}, t0, t0.Add(5*time.Minute)); err != nil {
			t.Fatal(err)
		}
		for try := 1; try <= 3; try++ {
			c, err := db.TryLoginChallenge(ctx, "c1", t0, 3)
			if err != nil || c.StaffID != 7 || c.Next != "/console/orders" || c.Tries != try {
				t.Fatalf("try %d: %+v %v", try, c, err)
			}
		}
		if _, err := db.TryLoginChallenge(ctx, "c1", t0, 3); !errors.Is(err, access.ErrNoChallenge) {
			t.Fatalf("a fourth try of three: %v", err)
		}
		if _, err := db.TryLoginChallenge(ctx, "c1", t0, 100); !errors.Is(err, access.ErrNoChallenge) {
			t.Fatalf("a used-up challenge came back with a higher limit: %v", err)
		}
		if err := db.CreateLoginChallenge(ctx, "c2", LoginChallenge{StaffID: 7}, t0, t0.Add(5*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, err := db.TryLoginChallenge(ctx, "c2", t0.Add(5*time.Minute), 3); !errors.Is(err, access.ErrNoChallenge) {
			t.Fatalf("expired challenge: %v", err)
		}
		if _, err := db.TryLoginChallenge(ctx, "nope", t0, 3); !errors.Is(err, access.ErrNoChallenge) {
			t.Fatalf("unknown challenge: %v", err)
		}
	})
}

// TestTOTPWrongCodes: wrong codes count within their window; the
// TOTPMaxFailures-th locks the factor (refusing even a right code) and
// writes the audit line; the next lock without a right code lasts twice as
// long; unlocking lifts it.
func TestTOTPWrongCodes(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		ann := mkStaffWithSessions(t, db, "ann")
		if err := db.OfferTOTP(ctx, ann.ID, "JBSWY3DPEHPK3PXP", t0); err != nil {
			t.Fatal(err)
		}
		if won, err := db.UseTOTPStep(ctx, ann.ID, 1, true, t0, nil); !won || err != nil {
			t.Fatalf("confirm: %t %v", won, err)
		}
		lock := core.AuditEntry{At: t0, Staff: "ann", Action: access.AuditTOTPLocked}
		fail := func(at time.Time) time.Time {
			t.Helper()
			until, err := db.FailTOTPCode(ctx, ann.ID, at, lock)
			if err != nil {
				t.Fatal(err)
			}
			return until
		}
		for i := range access.TOTPMaxFailures - 1 {
			if until := fail(t0); !until.IsZero() {
				t.Fatalf("wrong code %d locked", i+1)
			}
		}
		// Past the window the count starts again.
		later := t0.Add(access.TOTPFailureWindow)
		for i := range access.TOTPMaxFailures - 1 {
			if until := fail(later); !until.IsZero() {
				t.Fatalf("wrong code %d of a new window locked", i+1)
			}
		}
		if until := fail(later); !until.Equal(later.Add(access.TOTPLockout)) {
			t.Fatalf("the %dth wrong code: locked until %v", access.TOTPMaxFailures, until)
		}
		if f, _, _ := db.TOTP(ctx, ann.ID); !f.Locked(later) || f.Lockouts != 1 {
			t.Fatalf("after the lock: %+v", f)
		}
		if won, err := db.UseTOTPStep(ctx, ann.ID, 2, false, later, nil); won || err != nil {
			t.Fatalf("a right code while locked: %t %v", won, err)
		}
		again := later.Add(access.TOTPLockout)
		for range access.TOTPMaxFailures - 1 {
			fail(again)
		}
		if until := fail(again); !until.Equal(again.Add(2 * access.TOTPLockout)) {
			t.Fatalf("the second lock ends %v, want twice as long", until)
		}
		if n := len(auditActions(t, db, access.AuditTOTPLocked)); n != 2 {
			t.Errorf("%d lock audit lines, want 2", n)
		}
		if was, err := db.UnlockTOTP(ctx, ann.ID, again, core.AuditEntry{At: again, Action: access.AuditTOTPUnlock}); !was || err != nil {
			t.Fatalf("unlock: %t %v", was, err)
		}
		if won, err := db.UseTOTPStep(ctx, ann.ID, 3, false, again, nil); !won || err != nil {
			t.Fatalf("a right code after the unlock: %t %v", won, err)
		}
		if f, _, _ := db.TOTP(ctx, ann.ID); f.Lockouts != 0 {
			t.Errorf("lockouts after a right code: %d", f.Lockouts)
		}
	})
}
