package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
)

func mkStaffWithSessions(t *testing.T, db *DB, name string, sessions ...string) access.Staff {
	t.Helper()
	ctx := context.Background()
	s, err := db.CreateStaff(ctx, access.Staff{Username: name, Role: access.RoleOps, CreatedAt: t0}, "old-hash")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range sessions {
		if err := db.CreateSession(ctx, access.Session{TokenHash: h, StaffID: s.ID, CSRFToken: "c", CreatedAt: t0,
			ExpiresAt: t0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func liveSessions(t *testing.T, db *DB, hashes ...string) []string {
	t.Helper()
	var live []string
	for _, h := range hashes {
		if _, _, err := db.Session(context.Background(), h, t0); err == nil {
			live = append(live, h)
		} else if !errors.Is(err, access.ErrNoSession) {
			t.Fatal(err)
		}
	}
	return live
}

func auditActions(t *testing.T, db *DB, action string) []core.AuditEntry {
	t.Helper()
	a, err := db.AuditLog(context.Background(), AuditQuery{Action: action, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSetPasswordEndsOtherSessions: a new password keeps the session that
// set it and ends the account's others, not another account's.
func TestSetPasswordEndsOtherSessions(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		ann := mkStaffWithSessions(t, db, "ann", "ann-1", "ann-2", "ann-3")
		mkStaffWithSessions(t, db, "bob", "bob-1")
		if err := db.SetPassword(ctx, ann.ID, "new-hash", "ann-2", core.AuditEntry{At: t0, Staff: "ann",
			Action: access.AuditPasswordChange, Target: "staff:ann"}); err != nil {
			t.Fatal(err)
		}
		if live := fmt.Sprint(liveSessions(t, db, "ann-1", "ann-2", "ann-3", "bob-1")); live != "[ann-2 bob-1]" {
			t.Errorf("live sessions %s, want [ann-2 bob-1]", live)
		}
		if _, hash, _ := db.StaffLogin(ctx, "ann"); hash != "new-hash" {
			t.Errorf("hash %q", hash)
		}
		if len(auditActions(t, db, access.AuditPasswordChange)) != 1 {
			t.Error("password change not audited")
		}
		if err := db.SetPassword(ctx, 999, "h", "", core.AuditEntry{At: t0, Action: access.AuditPasswordChange}); !errors.Is(err, access.ErrStaffNotFound) {
			t.Errorf("unknown account: %v", err)
		}
		if n := len(auditActions(t, db, access.AuditPasswordChange)); n != 1 {
			t.Errorf("%d audit lines after a refused change, want still 1", n)
		}
	})
}

func TestSetStaffRole(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		ann := mkStaffWithSessions(t, db, "ann", "ann-1")
		before, err := db.SetStaffRole(ctx, ann.ID, access.RoleAdmin, core.AuditEntry{At: t0, Staff: "root", Action: access.AuditStaffRole})
		if err != nil || before.Role != access.RoleOps {
			t.Fatalf("SetStaffRole: %+v, %v", before, err)
		}
		if _, st, err := db.Session(ctx, "ann-1", t0); err != nil || st.Role != access.RoleAdmin {
			t.Errorf("the live session's account: %+v, %v; want the new role at once", st, err)
		}
		a := auditActions(t, db, access.AuditStaffRole)
		if len(a) != 1 || a[0].Target != "staff:ann" || a[0].Detail["from"] != "ops" || a[0].Detail["to"] != "admin" {
			t.Errorf("audit %+v", a)
		}
		if _, err := db.SetStaffRole(ctx, 999, access.RoleAdmin, core.AuditEntry{At: t0, Action: access.AuditStaffRole}); !errors.Is(err, access.ErrStaffNotFound) {
			t.Errorf("unknown account: %v", err)
		}
	})
}

// TestPasswordResetLink: a link works once, until it expires, for an
// enabled account, and a newer link replaces it; using it ends every
// session of the account.
func TestPasswordResetLink(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		ann := mkStaffWithSessions(t, db, "ann", "ann-1", "ann-2")
		bob := mkStaffWithSessions(t, db, "bob")
		expires := t0.Add(access.PasswordResetTTL)
		link := func(s access.Staff, token string) {
			t.Helper()
			if err := db.CreatePasswordReset(ctx, s.ID, token, t0, expires, core.AuditEntry{At: t0, Staff: "root",
				Action: access.AuditPasswordResetLink, Target: "staff:" + s.Username}); err != nil {
				t.Fatal(err)
			}
		}
		link(ann, "first")
		link(ann, "second") // replaces "first"
		link(bob, "bob-link")
		if _, err := db.SetStaffDisabled(ctx, bob.ID, true); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name, token string
			at          time.Time
			wantErr     error
		}{
			{"replaced by a newer link", "first", t0, access.ErrResetLinkInvalid},
			{"unknown", "nope", t0, access.ErrResetLinkInvalid},
			{"expired", "second", expires, access.ErrResetLinkInvalid},
			{"disabled account", "bob-link", t0, access.ErrResetLinkInvalid},
			{"live", "second", expires.Add(-time.Millisecond), nil},
		}
		for _, tc := range cases {
			s, err := db.PasswordReset(ctx, tc.token, tc.at)
			if !errors.Is(err, tc.wantErr) || (err == nil && s.ID != ann.ID) {
				t.Errorf("%s: PasswordReset = %+v, %v; want %v", tc.name, s, err, tc.wantErr)
			}
			if tc.wantErr != nil {
				if _, err := db.UsePasswordReset(ctx, tc.token, "h", tc.at, core.AuditEntry{At: tc.at, Action: access.AuditPasswordReset}); !errors.Is(err, tc.wantErr) {
					t.Errorf("%s: UsePasswordReset = %v, want %v", tc.name, err, tc.wantErr)
				}
			}
		}
		s, err := db.UsePasswordReset(ctx, "second", "reset-hash", t0, core.AuditEntry{At: t0, Action: access.AuditPasswordReset})
		if err != nil || s.ID != ann.ID {
			t.Fatalf("use: %+v, %v", s, err)
		}
		if _, hash, _ := db.StaffLogin(ctx, "ann"); hash != "reset-hash" {
			t.Errorf("hash %q after reset", hash)
		}
		if live := liveSessions(t, db, "ann-1", "ann-2"); len(live) != 0 {
			t.Errorf("sessions %v live after a reset, want none", live)
		}
		if _, err := db.UsePasswordReset(ctx, "second", "again", t0, core.AuditEntry{At: t0, Action: access.AuditPasswordReset}); !errors.Is(err, access.ErrResetLinkInvalid) {
			t.Errorf("second use: %v", err)
		}
		if _, hash, _ := db.StaffLogin(ctx, "ann"); hash != "reset-hash" {
			t.Errorf("a used link changed the password again: %q", hash)
		}
		if a := auditActions(t, db, access.AuditPasswordReset); len(a) != 1 || a[0].Staff != "ann" {
			t.Errorf("audit of the reset: %+v", a)
		}
	})
}
