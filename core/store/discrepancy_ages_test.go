package store

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// TestOpenDiscrepancyAges: open discrepancies fall in the band of their
// age (an age equal to a cut-off is in the older band), resolved ones in
// none, and a band without any is zero.
func TestOpenDiscrepancyAges(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		now := t0.Add(100 * time.Hour)
		for i, d := range []struct {
			age    time.Duration
			amount int64
			status string
		}{
			{10 * time.Minute, 1000, DiscrepancyOpen},
			{time.Hour, 500, DiscrepancyOpen}, // exactly an hour: 1 h to 1 day
			{3 * time.Hour, 2500, DiscrepancyOpen},
			{72 * time.Hour, 7000, DiscrepancyOpen},
			{time.Minute, 9900, DiscrepancyResolved},
		} {
			if _, err := db.X().ExecContext(ctx, `INSERT INTO discrepancy (order_no, txn_id, kind, amount_cents, created_at, status, note)
 VALUES (?, ?, 'paid_after_cancel', ?, ?, ?, '')`, fmt.Sprintf("SFA%d", i), fmt.Sprintf("TA%d", i), d.amount,
				ms(now.Add(-d.age)), d.status); err != nil {
				t.Fatal(err)
			}
		}
		for _, tt := range []struct {
			name string
			ages []time.Duration
			want []DiscrepancyAge
		}{
			{"hour, day, older", []time.Duration{time.Hour, 24 * time.Hour}, []DiscrepancyAge{{1, 1000}, {2, 3000}, {1, 7000}}},
			{"one band", nil, []DiscrepancyAge{{4, 11000}}},
			{"empty bands", []time.Duration{time.Minute, 5 * time.Minute}, []DiscrepancyAge{{0, 0}, {0, 0}, {4, 11000}}},
		} {
			got, err := db.OpenDiscrepancyAges(ctx, now, tt.ages)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s: OpenDiscrepancyAges = %v, %v; want %v", tt.name, got, err, tt.want)
			}
		}
	})
}
