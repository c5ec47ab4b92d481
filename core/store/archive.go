package store

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Archive: retention never deletes the audit log or the money records
// (payments, refunds, discrepancies and their case history). `seatflow
// archive --before DATE` copies their rows older than DATE into one
// gzip-compressed JSON Lines file per table, beside a manifest with each
// file's row count, id range and SHA-256; `--verify` reads the files back
// and compares them with the database. Only the audit log may then be
// deleted (`--delete`): orders, refunds and reconcile read the money
// records, so those stay in the database however old.

// ArchiveTable is a table the archive copies and the column that dates a row.
type ArchiveTable struct {
	Name, TimeColumn string
	// Deletable: nothing reads the table's old rows but people, so an
	// archived row may leave the database.
	Deletable bool
}

// ArchiveTables are the tables `seatflow archive` copies, in file order.
var ArchiveTables = []ArchiveTable{
	{Name: "audit_log", TimeColumn: "at", Deletable: true},
	{Name: "payment", TimeColumn: "received_at"},
	{Name: "refund", TimeColumn: "created_at"},
	{Name: "discrepancy", TimeColumn: "created_at"},
	{Name: "discrepancy_event", TimeColumn: "at"},
}

func archivedTable(name string) (ArchiveTable, bool) {
	for _, t := range ArchiveTables {
		if t.Name == name {
			return t, true
		}
	}
	return ArchiveTable{}, false
}

// ArchiveManifest describes one archive: the files beside it.
type ArchiveManifest struct {
	Before    time.Time     `json:"before"`
	CreatedAt time.Time     `json:"created_at"`
	Dialect   string        `json:"dialect"`
	Files     []ArchiveFile `json:"files"`
}

// ArchiveFile is one table's file in an archive.
type ArchiveFile struct {
	Table   string `json:"table"`
	File    string `json:"file"` // base name, in the manifest's folder
	Rows    int    `json:"rows"`
	FirstID int64  `json:"first_id"`
	LastID  int64  `json:"last_id"`
	SHA256  string `json:"sha256"` // of the compressed file
}

// archivePage is how many rows one SELECT (or DELETE) of the archive spans.
const archivePage = 1000

// ManifestName is the manifest's file name for an archive of rows before
// the given time.
func ManifestName(before time.Time) string {
	return "seatflow-archive-before-" + archiveStamp(before) + ".json"
}

func archiveStamp(t time.Time) string { return t.UTC().Format("20060102T150405Z") }

// Archive writes every archived table's rows older than before into dir
// and returns the manifest, written last (a run that fails leaves no
// manifest, so nothing half-written can be verified or deleted from). An
// existing manifest for the same date is never overwritten.
func (db *DB) Archive(ctx context.Context, dir string, before, now time.Time) (ArchiveManifest, error) {
	if !before.Before(now) {
		return ArchiveManifest{}, fmt.Errorf("store: archive: --before %s is not in the past", before.Format(time.RFC3339))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ArchiveManifest{}, fmt.Errorf("store: archive: %w", err)
	}
	manifestPath := filepath.Join(dir, ManifestName(before))
	if _, err := os.Stat(manifestPath); err == nil {
		return ArchiveManifest{}, fmt.Errorf("store: archive: %s exists already", manifestPath)
	}
	m := ArchiveManifest{Before: before.UTC(), CreatedAt: now.UTC(), Dialect: string(db.dialect)}
	var written []string // temporary files, renamed once all are complete
	defer func() {
		for _, tmp := range written {
			os.Remove(tmp) // gone already after a successful rename
		}
	}()
	for _, t := range ArchiveTables {
		f := ArchiveFile{Table: t.Name, File: "seatflow-" + t.Name + "-before-" + archiveStamp(before) + ".jsonl.gz"}
		tmp, err := db.writeTableArchive(ctx, t, before, dir, &f)
		if tmp != "" {
			written = append(written, tmp)
		}
		if err != nil {
			return ArchiveManifest{}, err
		}
		m.Files = append(m.Files, f)
	}
	for i, f := range m.Files {
		if err := os.Rename(written[i], filepath.Join(dir, f.File)); err != nil {
			return ArchiveManifest{}, fmt.Errorf("store: archive: %w", err)
		}
	}
	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return ArchiveManifest{}, fmt.Errorf("store: archive: manifest: %w", err)
	}
	if err := writeNewFile(manifestPath, append(body, '\n')); err != nil {
		return ArchiveManifest{}, fmt.Errorf("store: archive: manifest: %w", err)
	}
	return m, nil
}

// writeTableArchive streams t's rows older than before, page by page in id
// order, into a new temporary file in dir, filling in f, and returns the
// file's path (also on failure, once it exists). The directory may be
// shared: the name is random and the file created exclusively (mode 0600),
// so nothing planted there (a symlink, a file) is followed or written.
func (db *DB) writeTableArchive(ctx context.Context, t ArchiveTable, before time.Time, dir string, f *ArchiveFile) (path string, err error) {
	out, err := os.CreateTemp(dir, f.File+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("store: archive %s: %w", t.Name, err)
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	return out.Name(), db.writeTableRows(ctx, t, before, out, f)
}

// writeTableRows writes t's rows older than before to out as gzipped JSON
// lines and syncs it, filling in f.
func (db *DB) writeTableRows(ctx context.Context, t ArchiveTable, before time.Time, out *os.File, f *ArchiveFile) error {
	sum := sha256.New()
	zw := gzip.NewWriter(io.MultiWriter(out, sum))
	q := `SELECT * FROM ` + t.Name + ` WHERE id > ? AND ` + t.TimeColumn + ` < ? ORDER BY id LIMIT ` + strconv.Itoa(archivePage)
	for after := int64(0); ; {
		rows, err := db.archiveRows(ctx, q, after, ms(before))
		if err != nil {
			return fmt.Errorf("store: archive %s after id %d: %w", t.Name, after, err)
		}
		for _, r := range rows {
			line, err := json.Marshal(r.cols)
			if err != nil {
				return fmt.Errorf("store: archive %s id %d: %w", t.Name, r.id, err)
			}
			if _, err := zw.Write(append(line, '\n')); err != nil {
				return fmt.Errorf("store: archive %s: %w", t.Name, err)
			}
			if f.Rows == 0 {
				f.FirstID = r.id
			}
			f.Rows++
			f.LastID, after = r.id, r.id
		}
		if len(rows) < archivePage {
			break
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("store: archive %s: %w", t.Name, err)
	}
	if err := out.Sync(); err != nil {
		return fmt.Errorf("store: archive %s: %w", t.Name, err)
	}
	f.SHA256 = hex.EncodeToString(sum.Sum(nil))
	return nil
}

// archiveRow is one row as the archive keeps it: every column by name.
type archiveRow struct {
	id   int64
	cols map[string]any
}

// archiveRows runs q and returns its rows with driver values made alike on
// both databases and both MySQL protocols (text as strings, integer columns
// as int64), so one row encodes to the same JSON at archive and at verify
// time.
func (db *DB) archiveRows(ctx context.Context, q string, args ...any) ([]archiveRow, error) {
	rows, err := db.w.QueryxContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	integer := map[string]bool{}
	for _, ct := range types {
		integer[ct.Name()] = strings.Contains(strings.ToUpper(ct.DatabaseTypeName()), "INT")
	}
	var out []archiveRow
	for rows.Next() {
		cols := map[string]any{}
		if err := rows.MapScan(cols); err != nil {
			return nil, err
		}
		for k, v := range cols {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			if s, ok := v.(string); ok && integer[k] {
				if n, err := strconv.ParseInt(s, 10, 64); err == nil {
					v = n
				}
			}
			cols[k] = v
		}
		id, ok := cols["id"].(int64)
		if !ok {
			return nil, fmt.Errorf("id column is %T, not an integer", cols["id"])
		}
		out = append(out, archiveRow{id: id, cols: cols})
	}
	return out, rows.Err()
}

// ArchiveCheck is what verifying one file found.
type ArchiveCheck struct {
	Table string
	Rows  int // lines in the file
	// Same: rows still in the database and equal there in every archived
	// column; Gone: rows no longer in the database (deleted after
	// archiving); Differ: ids whose database row no longer matches.
	Same, Gone int
	Differ     []int64
}

// VerifyArchive re-reads the archive whose manifest is at manifestPath:
// each file's checksum, that it decompresses into JSON objects in rising id
// order within the manifest's range and count, and each row against the
// database. It returns the checks and an error for the first file that is
// damaged; rows that differ from the database are reported in Differ.
func (db *DB) VerifyArchive(ctx context.Context, manifestPath string) (ArchiveManifest, []ArchiveCheck, error) {
	m, err := readArchiveManifest(manifestPath)
	if err != nil {
		return m, nil, err
	}
	var checks []ArchiveCheck
	for _, f := range m.Files {
		c, err := db.verifyFile(ctx, filepath.Dir(manifestPath), m.Before, f)
		if err != nil {
			return m, checks, fmt.Errorf("store: verify %s: %w", f.File, err)
		}
		checks = append(checks, c)
	}
	return m, checks, nil
}

// readArchiveManifest reads and checks a manifest.
func readArchiveManifest(path string) (ArchiveManifest, error) {
	var m ArchiveManifest
	body, err := os.ReadFile(path)
	if err != nil {
		return m, fmt.Errorf("store: archive manifest: %w", err)
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return m, fmt.Errorf("store: archive manifest %s: %w", path, err)
	}
	for _, f := range m.Files {
		if _, ok := archivedTable(f.Table); !ok || filepath.Base(f.File) != f.File {
			return m, fmt.Errorf("store: archive manifest %s: unknown table %q or file %q", path, f.Table, f.File)
		}
	}
	return m, nil
}

func (db *DB) verifyFile(ctx context.Context, dir string, before time.Time, f ArchiveFile) (ArchiveCheck, error) {
	c := ArchiveCheck{Table: f.Table}
	t, _ := archivedTable(f.Table)
	raw, err := os.ReadFile(filepath.Join(dir, f.File))
	if err != nil {
		return c, err
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != f.SHA256 {
		return c, errors.New("SHA-256 differs from the manifest: the file changed after it was written")
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return c, err
	}
	lines := bufio.NewScanner(zr)
	lines.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var page []archivedLine
	last := int64(0)
	for lines.Scan() {
		var row struct {
			ID int64 `json:"id"`
		}
		if err := json.Unmarshal(lines.Bytes(), &row); err != nil || row.ID <= last {
			return c, fmt.Errorf("line %d: not a row with an id above %d: %v", c.Rows+1, last, err)
		}
		last = row.ID
		c.Rows++
		page = append(page, archivedLine{id: row.ID, json: bytes.Clone(lines.Bytes())})
		if len(page) == archivePage {
			if err := db.compareRows(ctx, t, before, page, &c); err != nil {
				return c, err
			}
			page = page[:0]
		}
	}
	if err := lines.Err(); err != nil {
		return c, err
	}
	if err := db.compareRows(ctx, t, before, page, &c); err != nil {
		return c, err
	}
	if c.Rows != f.Rows || (c.Rows > 0 && last != f.LastID) {
		return c, fmt.Errorf("%d rows ending at id %d, the manifest says %d ending at %d", c.Rows, last, f.Rows, f.LastID)
	}
	return c, nil
}

type archivedLine struct {
	id   int64
	json []byte
}

// compareRows compares archived lines with the database's rows of the same
// ids: equal in every archived column (a column a later migration added is
// not in the archive and not compared).
func (db *DB) compareRows(ctx context.Context, t ArchiveTable, before time.Time, page []archivedLine, c *ArchiveCheck) error {
	if len(page) == 0 {
		return nil
	}
	q := `SELECT * FROM ` + t.Name + ` WHERE id >= ? AND id <= ? ORDER BY id`
	rows, err := db.archiveRows(ctx, q, page[0].id, page[len(page)-1].id)
	if err != nil {
		return fmt.Errorf("read back ids %d to %d: %w", page[0].id, page[len(page)-1].id, err)
	}
	byID := make(map[int64]map[string]any, len(rows))
	for _, r := range rows {
		byID[r.id] = r.cols
	}
	for _, l := range page {
		cur, ok := byID[l.id]
		if !ok {
			c.Gone++
			continue
		}
		var archived map[string]json.RawMessage
		if err := json.Unmarshal(l.json, &archived); err != nil {
			return err
		}
		same := make(map[string]any, len(archived))
		for k := range archived {
			same[k] = cur[k]
		}
		now, err := json.Marshal(same)
		if err != nil {
			return err
		}
		if bytes.Equal(now, l.json) {
			c.Same++
		} else {
			c.Differ = append(c.Differ, l.id)
		}
	}
	return nil
}

// DeleteArchived verifies the archive at manifestPath and then deletes from
// the database the rows of its deletable tables: only when every archived
// row of those tables verified equal to the database (a row that changed
// since would be lost). It deletes in batches of at most archivePage ids,
// each one short autocommit DELETE of rows older than the archive's date,
// so no lock is held long.
func (db *DB) DeleteArchived(ctx context.Context, manifestPath string) (ArchiveManifest, int, error) {
	m, checks, err := db.VerifyArchive(ctx, manifestPath)
	if err != nil {
		return m, 0, err
	}
	for _, c := range checks {
		if t, _ := archivedTable(c.Table); t.Deletable && len(c.Differ) > 0 {
			return m, 0, fmt.Errorf("store: archive: %d %s rows differ from the archive (ids %v...): nothing deleted",
				len(c.Differ), c.Table, c.Differ[:min(len(c.Differ), 5)])
		}
	}
	deleted := 0
	for _, f := range m.Files {
		t, _ := archivedTable(f.Table)
		if !t.Deletable || f.Rows == 0 {
			continue
		}
		q := `DELETE FROM ` + t.Name + ` WHERE id >= ? AND id < ? AND ` + t.TimeColumn + ` < ?`
		for lo := f.FirstID; lo <= f.LastID; lo += archivePage {
			res, err := db.w.ExecContext(ctx, q, lo, min(lo+archivePage, f.LastID+1), ms(m.Before))
			if err != nil {
				return m, deleted, dbErr(err, "delete archived %s from id %d", t.Name, lo)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return m, deleted, dbErr(err, "delete archived %s from id %d", t.Name, lo)
			}
			deleted += int(n)
		}
	}
	return m, deleted, nil
}

// writeNewFile writes body to a file that must not exist yet, mode 0600
// (archives hold customers' and staff's data).
func writeNewFile(path string, body []byte) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	if _, err := f.Write(body); err != nil {
		return err
	}
	return f.Sync()
}
