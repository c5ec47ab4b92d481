package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"seatflow/core"
)

// TestOrderReadsTogether: reads answered as one SELECT … IN give each
// caller exactly what a read of its own gives: its order, one order asked
// twice in the same batch, a missing number, and a number spelled in
// another case (found alone on MariaDB, whose collation matches it; not
// on SQLite).
func TestOrderReadsTogether(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		show := mkShow(t, db, 2, 10)
		for i := range 3 {
			mustPlace(t, db, pending(fmt.Sprintf("R%d", i), show.ID, 7, t0, fmt.Sprintf("A-%d", i+1)))
		}
		nos := []string{"R0", "R1", "R2", "R1", "nope", "r2"}
		alone := make([]*orderRead, len(nos))
		batch := make([]*orderRead, len(nos))
		for i, no := range nos {
			alone[i], batch[i] = &orderRead{orderNo: no}, &orderRead{orderNo: no}
			db.runOrderReads(ctx, alone[i:i+1])
		}
		db.runOrderReads(ctx, batch)
		for i, no := range nos {
			if !reflect.DeepEqual(batch[i].o, alone[i].o) || fmt.Sprint(batch[i].err) != fmt.Sprint(alone[i].err) {
				t.Errorf("%s together: %+v, %v; alone: %+v, %v", no, batch[i].o, batch[i].err, alone[i].o, alone[i].err)
			}
			if strings.HasPrefix(no, "R") && (batch[i].err != nil || batch[i].o.OrderNo != no) {
				t.Errorf("%s together: %+v, %v", no, batch[i].o, batch[i].err)
			}
		}
		if !errors.Is(batch[4].err, core.ErrOrderNotFound) {
			t.Errorf("missing order together: %v, want ErrOrderNotFound", batch[4].err)
		}
	})
}
