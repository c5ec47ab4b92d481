package store

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/testenv"
	"seatflow/migrations"
)

// TestMigrateSessionLastSeen: a session open at the upgrade to 00015
// counts as used when it began (not at the epoch, which would end it at
// once), and 00015 goes back down.
func TestMigrateSessionLastSeen(t *testing.T) {
	for _, b := range []struct {
		name string
		dsn  func(t testing.TB) string
	}{
		{"sqlite", func(t testing.TB) string { return "sqlite://" + t.TempDir() + "/old.db" }},
		{"mariadb", testenv.NewMySQLDatabase},
	} {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, err := Open(ctx, b.dsn(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			dir, err := fs.Sub(migrations.FS, string(db.Dialect()))
			if err != nil {
				t.Fatal(err)
			}
			p, err := goose.NewProvider(db.Dialect().gooseDialect(), db.w.DB, dir, goose.WithDisableGlobalRegistry(true))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.UpTo(ctx, 14); err != nil {
				t.Fatal(err)
			}
			if _, err := db.X().ExecContext(ctx, `INSERT INTO staff (id, username, password_hash, role, created_at, disabled)
				VALUES (1, 'ann', 'h', 'ops', ?, 0)`, ms(t0)); err != nil {
				t.Fatal(err)
			}
			if _, err := db.X().ExecContext(ctx, `INSERT INTO staff_session (token_hash, staff_id, csrf_token, created_at, expires_at)
				VALUES ('h1', 1, 'c', ?, ?)`, ms(t0), ms(t0.Add(time.Hour))); err != nil {
				t.Fatal(err)
			}
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			s, _, err := db.Session(ctx, "h1", t0)
			if err != nil || !s.LastSeenAt.Equal(t0) {
				t.Fatalf("session after the upgrade: last use %v, %v; want %v", s.LastSeenAt, err, t0)
			}
			if _, err := p.DownTo(ctx, 14); err != nil {
				t.Fatalf("down: %v", err)
			}
		})
	}
}

// TestSessionLastUse: a new session counts as used at its creation; a use
// is written only when the recorded one is a minute old or more; the
// account's session list leaves out other accounts and expired sessions
// and puts the latest use first.
func TestSessionLastUse(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		ann, err := db.CreateStaff(ctx, access.Staff{Username: "ann", Role: access.RoleOps, CreatedAt: t0}, "h")
		if err != nil {
			t.Fatal(err)
		}
		bob, err := db.CreateStaff(ctx, access.Staff{Username: "bob", Role: access.RoleOps, CreatedAt: t0}, "h")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []access.Session{
			{TokenHash: "a1", StaffID: ann.ID, CSRFToken: "c", CreatedAt: t0, ExpiresAt: t0.Add(12 * time.Hour), IP: "192.0.2.1", UserAgent: "Firefox"},
			{TokenHash: "a2", StaffID: ann.ID, CSRFToken: "c", CreatedAt: t0.Add(time.Second), ExpiresAt: t0.Add(12 * time.Hour)},
			{TokenHash: "a-old", StaffID: ann.ID, CSRFToken: "c", CreatedAt: t0.Add(-12 * time.Hour), ExpiresAt: t0.Add(time.Minute)},
			{TokenHash: "b1", StaffID: bob.ID, CSRFToken: "c", CreatedAt: t0, ExpiresAt: t0.Add(12 * time.Hour)},
		} {
			if err := db.CreateSession(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		lastSeen := func(hash string) time.Time {
			t.Helper()
			s, _, err := db.Session(ctx, hash, t0)
			if err != nil {
				t.Fatalf("session %s: %v", hash, err)
			}
			return s.LastSeenAt
		}
		if got := lastSeen("a1"); !got.Equal(t0) {
			t.Fatalf("a new session's last use is %v, want its creation %v", got, t0)
		}
		for _, step := range []struct {
			name string
			at   time.Time
			want time.Time
		}{
			{"within the minute: not written", t0.Add(59 * time.Second), t0},
			{"a minute on: written", t0.Add(time.Minute), t0.Add(time.Minute)},
			{"again within the minute", t0.Add(90 * time.Second), t0.Add(time.Minute)},
			{"twenty minutes on", t0.Add(21 * time.Minute), t0.Add(21 * time.Minute)},
		} {
			if err := db.TouchSession(ctx, "a1", step.at, access.SessionTouchEvery); err != nil {
				t.Fatal(err)
			}
			if got := lastSeen("a1"); !got.Equal(step.want) {
				t.Errorf("%s: last use %v, want %v", step.name, got, step.want)
			}
		}
		if got := lastSeen("a2"); !got.Equal(t0.Add(time.Second)) {
			t.Errorf("touching a1 moved a2's last use to %v", got)
		}

		// A browser's user agent that is not UTF-8 is kept readable, not
		// refused (MariaDB's utf8mb4 would refuse it, failing the login).
		if err := db.CreateSession(ctx, access.Session{TokenHash: "a-bad-ua", StaffID: ann.ID, CSRFToken: "c", CreatedAt: t0,
			ExpiresAt: t0.Add(time.Minute), UserAgent: "Agent\xff\xfe/1"}); err != nil {
			t.Fatalf("user agent with bytes that are not UTF-8: %v", err)
		}
		if s, _, err := db.Session(ctx, "a-bad-ua", t0); err != nil || s.UserAgent != "Agent\uFFFD/1" {
			t.Errorf("user agent stored as %q, %v", s.UserAgent, err)
		}
		if err := db.DeleteSession(ctx, "a-bad-ua"); err != nil {
			t.Fatal(err)
		}

		list, err := db.StaffSessions(ctx, ann.ID, t0.Add(2*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		var hashes []string
		for _, s := range list {
			hashes = append(hashes, s.TokenHash)
		}
		if !slices.Equal(hashes, []string{"a1", "a2"}) {
			t.Fatalf("ann's sessions %v, want [a1 a2]: latest use first, no expired one, none of bob's", hashes)
		}
		if s := list[0]; s.IP != "192.0.2.1" || s.UserAgent != "Firefox" || !s.CreatedAt.Equal(t0) ||
			!s.LastSeenAt.Equal(t0.Add(21*time.Minute)) || s.StaffID != ann.ID {
			t.Errorf("listed session %+v", s)
		}
	})
}

// TestEndSessions: ending an account's other sessions keeps the named one,
// ending all keeps none, other accounts keep theirs, and each ending is
// audited in its transaction with the account and the count.
func TestEndSessions(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		ann, err := db.CreateStaff(ctx, access.Staff{Username: "ann", Role: access.RoleOps, CreatedAt: t0}, "h")
		if err != nil {
			t.Fatal(err)
		}
		bob, err := db.CreateStaff(ctx, access.Staff{Username: "bob", Role: access.RoleAdmin, CreatedAt: t0}, "h")
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range []string{"a1", "a2", "a3", "b1"} {
			id := ann.ID
			if h[0] == 'b' {
				id = bob.ID
			}
			if err := db.CreateSession(ctx, access.Session{TokenHash: h, StaffID: id, CSRFToken: "c", CreatedAt: t0,
				ExpiresAt: t0.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
		left := func(id int64) []string {
			t.Helper()
			list, err := db.StaffSessions(ctx, id, t0)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, s := range list {
				out = append(out, s.TokenHash)
			}
			slices.Sort(out)
			return out
		}
		by := core.AuditEntry{At: t0, Staff: "ann", Role: access.RoleOps, IP: "192.0.2.1"}
		for _, step := range []struct {
			name        string
			staff       int64
			keep        string
			action      string
			ended, left []string
		}{
			{"others", ann.ID, "a2", access.AuditSessionsEndOthers, []string{"a1", "a3"}, []string{"a2"}},
			{"others again: none left to end", ann.ID, "a2", access.AuditSessionsEndOthers, nil, []string{"a2"}},
			{"all", ann.ID, "", access.AuditSessionsEndAll, []string{"a2"}, nil},
		} {
			a := by
			a.Action = step.action
			ended, err := db.EndSessions(ctx, step.staff, step.keep, a)
			if err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
			slices.Sort(ended)
			if !slices.Equal(ended, step.ended) || !slices.Equal(left(step.staff), step.left) {
				t.Errorf("%s: ended %v, left %v; want %v, %v", step.name, ended, left(step.staff), step.ended, step.left)
			}
			log, err := db.AuditLog(ctx, AuditQuery{Limit: 1})
			if err != nil || len(log) != 1 {
				t.Fatalf("audit: %v, %v", log, err)
			}
			if e := log[0]; e.Action != step.action || e.Target != "staff:ann" || e.Staff != "ann" ||
				e.Detail["sessions"] != float64(len(step.ended)) {
				t.Errorf("%s: audit %+v", step.name, e)
			}
		}
		if got := left(bob.ID); !slices.Equal(got, []string{"b1"}) {
			t.Errorf("bob's sessions %v after ann ended hers", got)
		}

		audits := count(t, db, `SELECT COUNT(*) FROM audit_log`)
		if _, err := db.EndSessions(ctx, bob.ID+100, "", by); !errors.Is(err, access.ErrStaffNotFound) {
			t.Errorf("unknown account: %v", err)
		}
		if n := count(t, db, `SELECT COUNT(*) FROM audit_log`); n != audits {
			t.Errorf("an unknown account was audited: %d rows, want %d", n, audits)
		}
	})
}
