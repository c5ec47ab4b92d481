package store

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// DiscrepancyAge is how many open discrepancies one age band holds, and
// how much money they are about.
type DiscrepancyAge struct {
	N           int
	AmountCents int64
}

// discrepancyAgesSQL numbers the band of each open discrepancy by its
// created_at against bands-1 cut-offs, newest first, and sums per band.
func discrepancyAgesSQL(bands int) string {
	band := "0"
	if bands > 1 {
		var b strings.Builder
		b.WriteString(`CASE`)
		for i := range bands - 1 {
			b.WriteString(` WHEN created_at > ? THEN ` + strconv.Itoa(i))
		}
		b.WriteString(` ELSE ` + strconv.Itoa(bands-1) + ` END`)
		band = b.String()
	}
	return `SELECT ` + band + ` AS band, COUNT(*) AS n, COALESCE(SUM(amount_cents), 0) AS amount
 FROM discrepancy WHERE status = ? GROUP BY band`
}

// OpenDiscrepancyAges sorts the open discrepancies (status open: every
// case not in a final state) by their age at now: band i holds those
// younger than ages[i] (ascending) and not younger than ages[i-1], one
// more band the older ones. Counted in the database rather than from a
// page of rows, so the amounts are whole however many are open. One range
// on idx_status_created.
func (db *DB) OpenDiscrepancyAges(ctx context.Context, now time.Time, ages []time.Duration) ([]DiscrepancyAge, error) {
	args := make([]any, 0, len(ages)+1)
	for _, a := range ages {
		args = append(args, ms(now.Add(-a)))
	}
	var rs []struct {
		Band   int   `db:"band"`
		N      int   `db:"n"`
		Amount int64 `db:"amount"`
	}
	if err := db.r.SelectContext(ctx, &rs, discrepancyAgesSQL(len(ages)+1), append(args, DiscrepancyOpen)...); err != nil {
		return nil, dbErr(err, "open discrepancies by age")
	}
	out := make([]DiscrepancyAge, len(ages)+1)
	for _, r := range rs {
		out[r.Band] = DiscrepancyAge{N: r.N, AmountCents: r.Amount}
	}
	return out, nil
}
