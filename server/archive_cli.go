package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"seatflow/core"
	"seatflow/core/store"
)

const archiveUsage = "usage: seatflow archive --before DATE [--dir DIR] [--delete] | archive --verify MANIFEST"

// ArchiveCommand is `seatflow archive`: copy the audit log and the money
// records older than --before into compressed JSON Lines files in dir (the
// default folder unless --dir), then verify them; --delete then removes the
// archived audit rows from the database. --verify re-reads an archive.
func ArchiveCommand(ctx context.Context, db *store.DB, args []string, defaultDir string, now time.Time, stdout io.Writer) error {
	fs := flag.NewFlagSet("archive", flag.ContinueOnError)
	fs.SetOutput(stdout)
	before := fs.String("before", "", "archive rows older than this date (YYYY-MM-DD, UTC midnight) or RFC 3339 time")
	dir := fs.String("dir", defaultDir, "folder for the archive files")
	del := fs.Bool("delete", false, "after a clean verify, delete the archived audit-log rows from the database")
	verify := fs.String("verify", "", "re-read the archive of this manifest file and compare it with the database")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("archive: %w", err)
	}
	if fs.NArg() != 0 || (*verify == "") == (*before == "") || (*verify != "" && *del) {
		return errors.New(archiveUsage)
	}
	if *verify != "" {
		m, checks, err := db.VerifyArchive(ctx, *verify)
		if err != nil {
			return fmt.Errorf("archive --verify: %w", err)
		}
		if err := printArchiveChecks(stdout, m, checks); err != nil {
			return err
		}
		for _, c := range checks {
			if len(c.Differ) > 0 {
				return fmt.Errorf("archive --verify: %d %s rows differ from the database, e.g. id %d", len(c.Differ), c.Table, c.Differ[0])
			}
		}
		return nil
	}
	at, err := parseArchiveDate(*before)
	if err != nil {
		return err
	}
	m, err := db.Archive(ctx, *dir, at, now)
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	manifest := filepath.Join(*dir, store.ManifestName(at))
	if !*del {
		_, checks, err := db.VerifyArchive(ctx, manifest)
		if err != nil {
			return fmt.Errorf("archive: written to %s but it does not verify: %w", manifest, err)
		}
		return printArchiveChecks(stdout, m, checks)
	}
	_, deleted, err := db.DeleteArchived(ctx, manifest)
	if err != nil {
		return fmt.Errorf("archive --delete: %w", err)
	}
	if err := db.AddAudit(ctx, core.AuditEntry{At: now, Staff: cliActor.Staff, Action: core.AuditArchiveDelete,
		Target: filepath.Base(manifest), Detail: map[string]any{"before": at.Format(time.RFC3339), "deleted": deleted}}); err != nil {
		return fmt.Errorf("archive --delete: %d rows deleted but not audited: %w", deleted, err)
	}
	fmt.Fprintf(stdout, "archive: %s verified; %d audit-log rows deleted from the database\n", manifest, deleted)
	return nil
}

// parseArchiveDate reads --before: a date is midnight UTC of that day.
func parseArchiveDate(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("archive: --before %q is neither YYYY-MM-DD nor an RFC 3339 time", s)
	}
	return t.UTC(), nil
}

func printArchiveChecks(w io.Writer, m store.ArchiveManifest, checks []store.ArchiveCheck) error {
	fmt.Fprintf(w, "archive of rows before %s (written %s):\n", m.Before.Format(time.RFC3339), m.CreatedAt.Format(time.RFC3339))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tFILE\tROWS\tSAME IN DB\tDELETED FROM DB\tDIFFER")
	for i, c := range checks {
		differ := "0"
		if len(c.Differ) > 0 {
			differ = fmt.Sprintf("%d (ids %s)", len(c.Differ), joinIDs(c.Differ[:min(len(c.Differ), 5)]))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", c.Table, m.Files[i].File, c.Rows, c.Same, c.Gone, differ)
	}
	return tw.Flush()
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ", ")
}
