package server

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/store"
)

func TestArchiveCommand(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "seatflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, at := range []time.Time{now.AddDate(0, -2, 0), now.AddDate(0, -1, -1), now.Add(-time.Hour)} {
		if err := db.AddAudit(ctx, core.AuditEntry{At: at, Staff: "ann", Action: core.AuditLogin}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	manifest := filepath.Join(dir, "seatflow-archive-before-20260501T000000Z.json")
	steps := []struct {
		args    []string
		wantErr string
		wantOut []string
	}{
		{nil, "usage", nil},
		{[]string{"--before", "2026-05-01", "--verify", manifest}, "usage", nil},
		{[]string{"--verify", manifest, "--delete"}, "usage", nil},
		{[]string{"--before", "May 1"}, "neither YYYY-MM-DD", nil},
		{[]string{"--before", "2026-07-01", "--dir", dir}, "not in the past", nil},
		{[]string{"--verify", manifest}, "no such file", nil},
		{[]string{"--before", "2026-05-01", "--dir", dir}, "", []string{"audit_log", "seatflow-audit_log-before-20260501T000000Z.jsonl.gz 2 2 0 0"}},
		{[]string{"--verify", manifest}, "", []string{"audit_log"}},
		{[]string{"--before", "2026-05-01", "--dir", dir, "--delete"}, "exists already", nil},
		{[]string{"--before", "2026-05-01T00:00:00+02:00", "--dir", dir, "--delete"}, "", []string{"2 audit-log rows deleted"}},
		{[]string{"--verify", manifest}, "", []string{"audit_log seatflow-audit_log-before-20260501T000000Z.jsonl.gz 2 0 2 0"}},
	}
	for _, s := range steps {
		var out bytes.Buffer
		err := ArchiveCommand(ctx, db, s.args, filepath.Join(t.TempDir(), "default"), now, &out)
		switch {
		case s.wantErr == "" && err != nil:
			t.Fatalf("archive %q: %v", s.args, err)
		case s.wantErr != "" && (err == nil || !strings.Contains(err.Error(), s.wantErr)):
			t.Fatalf("archive %q: %v, want an error with %q", s.args, err, s.wantErr)
		}
		for _, w := range s.wantOut {
			if !strings.Contains(strings.Join(strings.Fields(out.String()), " "), w) {
				t.Errorf("archive %q printed\n%s\nwant %q", s.args, out.String(), w)
			}
		}
	}
	audit, err := db.AuditLog(ctx, store.AuditQuery{Action: core.AuditArchiveDelete, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != 1 || audit[0].Detail["deleted"] != float64(2) {
		t.Errorf("audit of the delete: %+v, want one entry with deleted=2", audit)
	}
}
