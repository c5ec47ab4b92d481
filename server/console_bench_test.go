package server

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
)

// BenchmarkPendingHoldsPage renders the pending-holds page (count, one page
// of 50, the whole HTML) with 100,000 pending holds in the SQLite store.
func BenchmarkPendingHoldsPage(b *testing.B) {
	const holds = 100_000
	env := newConsoleEnv(b)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	err := env.db.InTx(ctx, func(tx core.Tx) error {
		for i := range holds {
			created := now.Add(-time.Duration(i%900) * time.Second)
			o := core.Order{OrderNo: fmt.Sprintf("SFBENCH%08d", i), ShowID: env.show.ID, UserID: int64(1 + i%5000),
				Status: core.StatusPending, AmountCents: 5000, SeatIDs: []string{fmt.Sprintf("Z-%d", i)},
				CreatedAt: created, ExpireAt: created.Add(15 * time.Minute), TimeoutHop: 1, TimeoutDueAt: created.Add(10 * time.Minute)}
			if err := tx.InsertOrder(ctx, o); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	br := env.login(access.RoleBoxOffice)
	for _, c := range []struct{ name, query string }{
		{"first-page", ""},
		{"newest-first", "?sort=created"},
		{"page-1000", "?page=1000"},
		{"last-page", fmt.Sprintf("?page=%d", holds/holdsPageSize)},
		{"by-user", "?user=42"},
		{"by-show", fmt.Sprintf("?show=%d", env.show.ID)},
		{"order-no-search", "?q=0004242"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if rec := br.do("GET", "/console/holds"+c.query, nil, nil); rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
			}
		})
	}
}
