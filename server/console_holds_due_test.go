package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/stacktest"
	"seatflow/web"
)

// TestConsoleHoldsDue: the holds list's due filter, which the dashboard's
// cards link to, keeps the holds expiring within 5 minutes or those
// pending past their expiry; anything else is a 400. On both stacks.
func TestConsoleHoldsDue(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		env := newConsoleEnvOn(t, st)
		ctx := t.Context()
		now := env.clock.Now()
		placeAt := func(at time.Time, user int64, seat string) string {
			o, err := st.Engine(t, core.Config{}, stacktest.NewClock(at)).Place(ctx,
				core.PlaceRequest{UserID: user, ShowID: env.show.ID, SeatIDs: []string{seat}})
			if err != nil {
				t.Fatal(err)
			}
			return `id="hold-` + o.OrderNo + `"`
		}
		// Holds of 15 minutes: expired 5 minutes ago, expiring in 3, in 15.
		overdue := placeAt(now.Add(-20*time.Minute), 90, "A-1")
		soon := placeAt(now.Add(-12*time.Minute), 91, "A-2")
		later := `id="hold-` + env.place(92, "A-3").OrderNo + `"`
		bo := env.login(access.RoleBoxOffice)
		for _, tc := range []struct {
			due       string
			want, not []string
		}{
			{web.DueSoon, []string{soon, `<option value="soon" selected>`}, []string{overdue, later}},
			{web.DueOverdue, []string{overdue}, []string{soon, later}},
			{"", []string{overdue, soon, later}, nil},
		} {
			rec := bo.do("GET", "/console/holds?due="+tc.due, nil, nil)
			page := rec.Body.String()
			if rec.Code != http.StatusOK {
				t.Fatalf("holds?due=%s: %d", tc.due, rec.Code)
			}
			for _, want := range tc.want {
				if !strings.Contains(page, want) {
					t.Errorf("holds?due=%s lacks %s", tc.due, want)
				}
			}
			for _, not := range tc.not {
				if strings.Contains(page, not) {
					t.Errorf("holds?due=%s has %s", tc.due, not)
				}
			}
		}
		if code := bo.do("GET", "/console/holds?due=tomorrow", nil, nil).Code; code != http.StatusBadRequest {
			t.Errorf("holds?due=tomorrow: %d, want 400", code)
		}
	})
}
