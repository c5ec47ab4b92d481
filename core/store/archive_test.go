package store

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
)

// archiveFixture stores audit rows and payments on both sides of before:
// more old audit rows than one archive page, so paging is exercised.
func archiveFixture(t *testing.T, db *DB, before time.Time) (oldAudit int) {
	t.Helper()
	ctx := context.Background()
	oldAudit = archivePage + 37
	for i := range oldAudit {
		if err := db.AddAudit(ctx, core.AuditEntry{At: before.Add(-time.Duration(oldAudit-i) * time.Second), Staff: "ann",
			Role: access.RoleOps, Action: "test", Target: fmt.Sprint(i), Detail: map[string]any{"n": i, "text": "é\"\n"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.AddAudit(ctx, core.AuditEntry{At: before.Add(time.Second), Staff: "ann", Action: "young"}); err != nil {
		t.Fatal(err)
	}
	for i, at := range []time.Time{before.Add(-time.Hour), before.Add(-time.Minute), before.Add(time.Minute)} {
		if _, err := db.X().ExecContext(ctx, `INSERT INTO payment (txn_id, order_no, amount_cents, paid_at, received_at, result)
 VALUES (?, 'no-such-order', 1000, ?, ?, 'discrepancy')`, fmt.Sprintf("txn-%d", i), ms(at), ms(at)); err != nil {
			t.Fatal(err)
		}
	}
	return oldAudit
}

func archiveFile(m ArchiveManifest, table string) ArchiveFile {
	i := slices.IndexFunc(m.Files, func(f ArchiveFile) bool { return f.Table == table })
	return m.Files[i]
}

func checkOf(checks []ArchiveCheck, table string) ArchiveCheck {
	i := slices.IndexFunc(checks, func(c ArchiveCheck) bool { return c.Table == table })
	return checks[i]
}

// TestArchiveRoundTrip: the archive holds exactly the rows older than its
// date, in files anyone can read with gunzip, and verifies against the
// database before and after the audit rows are deleted.
func TestArchiveRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		before := t0
		oldAudit := archiveFixture(t, db, before)
		dir := filepath.Join(t.TempDir(), "archive")

		m, err := db.Archive(ctx, dir, before, before.Add(24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if got := len(m.Files); got != len(ArchiveTables) {
			t.Fatalf("%d files, want one per table (%d)", got, len(ArchiveTables))
		}
		if f := archiveFile(m, "audit_log"); f.Rows != oldAudit || f.LastID-f.FirstID != int64(oldAudit-1) {
			t.Errorf("audit_log file: %+v, want %d rows", f, oldAudit)
		}
		if f := archiveFile(m, "payment"); f.Rows != 2 {
			t.Errorf("payment file: %d rows, want the 2 received before the date", f.Rows)
		}
		if f := archiveFile(m, "refund"); f.Rows != 0 {
			t.Errorf("refund file: %d rows, want 0", f.Rows)
		}
		manifest := filepath.Join(dir, ManifestName(before))
		for _, name := range []string{manifest, filepath.Join(dir, archiveFile(m, "audit_log").File)} {
			st, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, want 0600 (archives hold personal data)", name, st.Mode().Perm())
			}
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(left) > 0 {
			t.Errorf("temporary files left: %v", left)
		}

		// Readable without SeatFlow: gunzip, one JSON object a line.
		first := readFirstLine(t, filepath.Join(dir, archiveFile(m, "audit_log").File))
		if first["action"] != "test" || first["staff"] != "ann" || !strings.Contains(fmt.Sprint(first["detail"]), "é") {
			t.Errorf("first audit line: %v", first)
		}

		_, checks, err := db.VerifyArchive(ctx, manifest)
		if err != nil {
			t.Fatal(err)
		}
		if c := checkOf(checks, "audit_log"); c.Same != oldAudit || c.Gone != 0 || len(c.Differ) != 0 {
			t.Errorf("verify audit_log: %+v", c)
		}

		if _, err := db.Archive(ctx, dir, before, before.Add(24*time.Hour)); err == nil || !strings.Contains(err.Error(), "exists") {
			t.Errorf("second archive of the same date: %v, want refused", err)
		}

		_, deleted, err := db.DeleteArchived(ctx, manifest)
		if err != nil {
			t.Fatal(err)
		}
		if deleted != oldAudit {
			t.Errorf("deleted %d, want %d", deleted, oldAudit)
		}
		var audit, payments int
		if err := db.X().GetContext(ctx, &audit, `SELECT COUNT(*) FROM audit_log`); err != nil {
			t.Fatal(err)
		}
		if err := db.X().GetContext(ctx, &payments, `SELECT COUNT(*) FROM payment`); err != nil {
			t.Fatal(err)
		}
		if audit != 1 || payments != 3 {
			t.Errorf("after delete: %d audit rows (want the young one), %d payments (want all 3)", audit, payments)
		}
		_, checks, err = db.VerifyArchive(ctx, manifest)
		if err != nil {
			t.Fatal(err)
		}
		if c := checkOf(checks, "audit_log"); c.Gone != oldAudit || c.Same != 0 {
			t.Errorf("verify after delete: %+v, want every row gone", c)
		}
		if c := checkOf(checks, "payment"); c.Same != 2 {
			t.Errorf("verify payments after delete: %+v, want both still the same", c)
		}
	})
}

// TestArchiveVerifyFindsDamage: a changed file fails verify, and a database
// row that changed after archiving is reported and blocks --delete.
func TestArchiveVerifyFindsDamage(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		before := t0
		archiveFixture(t, db, before)
		now := before.Add(time.Hour)
		cases := []struct {
			name      string
			damage    func(t *testing.T, dir string, m ArchiveManifest)
			verifyErr string // "" when verify itself succeeds
			differ    string // table whose check lists a differing row
		}{
			{"file byte flipped", func(t *testing.T, dir string, m ArchiveManifest) {
				name := filepath.Join(dir, archiveFile(m, "payment").File)
				raw, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				raw[len(raw)/2] ^= 0xff
				if err := os.WriteFile(name, raw, 0o600); err != nil {
					t.Fatal(err)
				}
			}, "SHA-256", ""},
			{"file missing", func(t *testing.T, dir string, m ArchiveManifest) {
				if err := os.Remove(filepath.Join(dir, archiveFile(m, "refund").File)); err != nil {
					t.Fatal(err)
				}
			}, "no such file", ""},
			{"audit row changed in the database", func(t *testing.T, dir string, m ArchiveManifest) {
				if _, err := db.X().ExecContext(ctx, `UPDATE audit_log SET target = 'changed' WHERE id = ?`, archiveFile(m, "audit_log").FirstID+5); err != nil {
					t.Fatal(err)
				}
			}, "", "audit_log"},
		}
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				dir := t.TempDir()
				at := before.Add(-time.Duration(i) * time.Millisecond) // each case its own archive
				m, err := db.Archive(ctx, dir, at, now)
				if err != nil {
					t.Fatal(err)
				}
				tc.damage(t, dir, m)
				manifest := filepath.Join(dir, ManifestName(at))
				_, checks, err := db.VerifyArchive(ctx, manifest)
				if tc.verifyErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.verifyErr) {
						t.Fatalf("verify: %v, want an error with %q", err, tc.verifyErr)
					}
				} else if err != nil {
					t.Fatal(err)
				} else if c := checkOf(checks, tc.differ); len(c.Differ) != 1 {
					t.Fatalf("verify %s: %+v, want the one changed row", tc.differ, c)
				}
				var n int
				if err := db.X().GetContext(ctx, &n, `SELECT COUNT(*) FROM audit_log`); err != nil {
					t.Fatal(err)
				}
				if _, deleted, err := db.DeleteArchived(ctx, manifest); err == nil || deleted != 0 {
					t.Fatalf("delete from a damaged archive: %d deleted, err %v; want refused", deleted, err)
				}
				var after int
				if err := db.X().GetContext(ctx, &after, `SELECT COUNT(*) FROM audit_log`); err != nil {
					t.Fatal(err)
				}
				if after != n {
					t.Errorf("audit rows %d -> %d after a refused delete", n, after)
				}
			})
		}
	})
}

func TestArchiveRefusesAFutureDate(t *testing.T) {
	db := openTestSQLite(t)
	if _, err := db.Archive(context.Background(), t.TempDir(), t0, t0); err == nil {
		t.Fatal("archive of rows before now: want refused (rows still being written)")
	}
}

func readFirstLine(t *testing.T, name string) map[string]any {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	if !sc.Scan() {
		t.Fatalf("%s: empty", name)
	}
	var row map[string]any
	if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
		t.Fatal(err)
	}
	return row
}

// TestArchiveIgnoresPlantedTempFiles: a symlink someone else with access to
// the archive directory put where a temporary file could go is neither
// followed (its target written) nor renamed into the archive.
func TestArchiveIgnoresPlantedTempFiles(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		before := t0
		archiveFixture(t, db, before)
		dir := filepath.Join(t.TempDir(), "archive")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		victim := filepath.Join(t.TempDir(), "victim")
		const victimBody = "not the archive's to write\n"
		if err := os.WriteFile(victim, []byte(victimBody), 0o600); err != nil {
			t.Fatal(err)
		}
		// Where the temporary files of this date's archive used to go.
		for _, tb := range ArchiveTables {
			name := "seatflow-" + tb.Name + "-before-" + archiveStamp(before) + ".jsonl.gz.tmp"
			if err := os.Symlink(victim, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}

		m, err := db.Archive(ctx, dir, before, before.Add(24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if body, err := os.ReadFile(victim); err != nil || string(body) != victimBody {
			t.Errorf("the symlinks' target now holds %d bytes (%v), want it untouched", len(body), err)
		}
		for _, f := range m.Files {
			fi, err := os.Lstat(filepath.Join(dir, f.File))
			if err != nil {
				t.Fatal(err)
			}
			if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
				t.Errorf("%s is %v, want a regular file of mode 0600", f.File, fi.Mode())
			}
		}
		if _, checks, err := db.VerifyArchive(ctx, filepath.Join(dir, ManifestName(before))); err != nil {
			t.Fatal(err)
		} else {
			for _, c := range checks {
				if c.Same != c.Rows || len(c.Differ) > 0 {
					t.Errorf("verify %s: %+v", c.Table, c)
				}
			}
		}
	})
}
