package store

import (
	"context"
	"fmt"
	"io/fs"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"seatflow/core"
	"seatflow/core/testenv"
	"seatflow/migrations"
)

// TestMigrateDiscrepancyCases upgrades a database holding discrepancies
// resolved before cases existed: they become refunded cases with their
// resolution as history; open ones become open cases.
func TestMigrateDiscrepancyCases(t *testing.T) {
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
			if _, err := p.UpTo(ctx, 3); err != nil {
				t.Fatal(err)
			}
			for i, r := range []struct {
				status     string
				resolvedAt time.Time
				by, note   string
			}{
				{DiscrepancyOpen, time.Time{}, "", ""},
				{DiscrepancyResolved, t0.Add(time.Hour), "ann", "refunded by bank"},
			} {
				if _, err := db.X().ExecContext(ctx, `INSERT INTO discrepancy (order_no, txn_id, kind, amount_cents, created_at,
 status, resolved_at, resolved_by, note) VALUES (?, ?, 'paid_after_cancel', 100, ?, ?, ?, ?, ?)`,
					fmt.Sprintf("O%d", i), fmt.Sprintf("T%d", i), ms(t0), r.status, ms(r.resolvedAt), r.by, r.note); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			cases, err := db.DiscrepancyCases(ctx, CaseQuery{})
			if err != nil || len(cases) != 2 {
				t.Fatalf("cases %+v, %v", cases, err)
			}
			if c := cases[0]; c.State != core.CaseOpen || c.Owner != "" {
				t.Errorf("open discrepancy became %+v", c)
			}
			c := cases[1]
			if c.State != core.CaseRefunded || !c.UpdatedAt.Equal(t0.Add(time.Hour)) || c.Status != DiscrepancyResolved {
				t.Errorf("resolved discrepancy became %+v", c)
			}
			hist, err := db.CaseHistory(ctx, c.ID)
			want := core.CaseEvent{ID: hist[0].ID, DiscrepancyID: c.ID, At: t0.Add(time.Hour), Staff: "ann",
				Action: core.CaseActionMove, From: core.CaseOpen, To: core.CaseRefunded, Note: "refunded by bank"}
			if err != nil || len(hist) != 1 || hist[0] != want {
				t.Errorf("history %+v, %v; want %+v", hist, err, want)
			}
			if counts, err := db.CaseCounts(ctx); err != nil || counts[core.CaseOpen] != 1 || counts[core.CaseRefunded] != 1 {
				t.Errorf("counts %v, %v", counts, err)
			}
			// And back down: 00004 is reversible.
			if _, err := p.DownTo(ctx, 3); err != nil {
				t.Fatalf("down: %v", err)
			}
		})
	}
}

// TestCaseQueue checks the queue's order (oldest first) and its filters.
func TestCaseQueue(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		ds := []core.Discrepancy{
			{OrderNo: "O1", TxnID: "new", Kind: core.DiscrepancySecondPayment, AmountCents: 1, CreatedAt: t0.Add(time.Hour)},
			{OrderNo: "O2", TxnID: "old", Kind: core.DiscrepancyPaidAfterCancel, AmountCents: 1, CreatedAt: t0},
			{OrderNo: "O3", TxnID: "mid", Kind: core.DiscrepancyPaidAfterCancel, AmountCents: 1, CreatedAt: t0.Add(time.Minute)},
		}
		if err := db.InTx(ctx, func(tx core.Tx) error {
			for _, d := range ds {
				if err := tx.InsertDiscrepancy(ctx, d); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		cases := core.NewCases(db, nil)
		mid, _ := db.DiscrepancyCases(ctx, CaseQuery{Kind: core.DiscrepancyPaidAfterCancel, Offset: 1})
		if len(mid) != 1 || mid[0].TxnID != "mid" {
			t.Fatalf("second paid_after_cancel case: %+v", mid)
		}
		if _, err := cases.Take(ctx, mid[0].ID, "ann", "", nil); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			q    CaseQuery
			want string
		}{
			{CaseQuery{}, "[old mid new]"},
			{CaseQuery{States: []core.CaseState{core.CaseOpen}}, "[old mid new]"},
			{CaseQuery{States: []core.CaseState{core.CaseRefunded}}, "[]"},
			{CaseQuery{Kind: core.DiscrepancyPaidAfterCancel}, "[old mid]"},
			{CaseQuery{Owner: "ann"}, "[mid]"},
			{CaseQuery{Unowned: true}, "[old new]"},
			{CaseQuery{Limit: 1, Offset: 2}, "[new]"},
			{CaseQuery{OrderNo: "O3"}, "[mid]"},
		} {
			got, err := db.DiscrepancyCases(ctx, c.q)
			var txns []string
			for _, g := range got {
				txns = append(txns, g.TxnID)
			}
			if err != nil || fmt.Sprint(txns) != c.want {
				t.Errorf("%+v: %v, %v; want %s", c.q, txns, err, c.want)
			}
		}
		for _, q := range []CaseQuery{{States: []core.CaseState{"lost"}}, {Owner: "ann", Unowned: true}, {Limit: -1}} {
			if _, err := db.DiscrepancyCases(ctx, q); core.ErrorKind(err) != core.KindInvalid {
				t.Errorf("%+v: %v, want invalid_request", q, err)
			}
		}
	})
}

// TestCaseCurrency: a case's amount comes with its order's show's
// currency, so the queue can format 2500 yen as 2,500 and not 25.00; money
// for an order nobody knows has none.
func TestCaseCurrency(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		show, err := db.CreateShow(ctx, core.Show{Name: "Show", Venue: "Hall", StartsAt: t0.Add(48 * time.Hour), Currency: "JPY"},
			DemoSeats(1, 2, 2500))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx core.Tx) error {
			if err := tx.InsertOrder(ctx, pending("Y1", show.ID, 1, t0, "A-1")); err != nil {
				return err
			}
			for _, d := range []core.Discrepancy{
				{OrderNo: "Y1", TxnID: "known", Kind: core.DiscrepancySecondPayment, AmountCents: 2500, CreatedAt: t0},
				{OrderNo: "NOPE", TxnID: "unknown", Kind: core.DiscrepancyUnknownOrder, AmountCents: 2500, CreatedAt: t0.Add(time.Second)},
			} {
				if err := tx.InsertDiscrepancy(ctx, d); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		got, err := db.DiscrepancyCases(ctx, CaseQuery{})
		if err != nil || len(got) != 2 || got[0].Currency != "JPY" || got[1].Currency != "" {
			t.Fatalf("cases %+v, %v; want JPY, then none", got, err)
		}
		one, err := db.DiscrepancyCase(ctx, got[0].ID)
		if err != nil || one.Currency != "JPY" {
			t.Errorf("case %+v, %v; want JPY", one, err)
		}
	})
}
