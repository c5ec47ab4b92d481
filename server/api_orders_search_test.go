package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/store"
)

// orderFilterCase is one query of the filters GET /api/v1/orders and the
// console's orders page share (searchParams). TestSearchOrdersFilters and
// TestConsoleOrderFilters run every case on the same three orders, so a
// parameter one of them names or checks differently fails one of them.
type orderFilterCase struct {
	name  string
	query func(main, other int64) string
	// want are the orders found, newest first, as indices into the
	// fixture's orders: 0 pending and 1 cancelled on the main show, 2 on the
	// other show, placed in that order.
	want []int
	code string // the refusal's error code; "" when the search runs
}

var orderFilterCases = []orderFilterCase{
	{name: "no filter", query: func(_, _ int64) string { return "" }, want: []int{2, 1, 0}},
	{name: "show", query: func(m, _ int64) string { return fmt.Sprintf("show_id=%d", m) }, want: []int{1, 0}},
	{name: "other show", query: func(_, o int64) string { return fmt.Sprintf("show_id=%d", o) }, want: []int{2}},
	{name: "show and status", query: func(m, _ int64) string { return fmt.Sprintf("show_id=%d&status=cancelled", m) }, want: []int{1}},
	{name: "two statuses", query: func(_, _ int64) string { return "status=pending,cancelled" }, want: []int{2, 1, 0}},
	{name: "limit", query: func(_, _ int64) string { return "limit=1" }, want: []int{2}},
	{name: "show id with spaces", query: func(m, _ int64) string { return fmt.Sprintf("show_id=+%d+", m) }, want: []int{1, 0}},
	{name: "show id not a number", query: func(_, _ int64) string { return "show_id=abc" }, code: core.ErrSearchShow.Code},
	{name: "show id zero", query: func(_, _ int64) string { return "show_id=0" }, code: core.ErrSearchShow.Code},
	{name: "show id negative", query: func(_, _ int64) string { return "show_id=-3" }, code: core.ErrSearchShow.Code},
	{name: "show id too big", query: func(_, _ int64) string { return "show_id=99999999999999999999" }, code: core.ErrSearchShow.Code},
	{name: "bad status", query: func(_, _ int64) string { return "status=lost" }, code: core.ErrSearchStatus.Code},
	{name: "bad limit", query: func(_, _ int64) string { return "limit=0" }, code: core.ErrSearchLimit.Code},
	{name: "bad cursor", query: func(_, _ int64) string { return "cursor=zzz" }, code: core.ErrSearchCursor.Code},
}

// TestSearchOrdersFilters: GET /api/v1/orders applies each shared filter,
// and refuses each bad one with 400 and its code.
func TestSearchOrdersFilters(t *testing.T) {
	a := newTestApp(t)
	other, err := a.app.DB.CreateShow(t.Context(), core.Show{Name: "Other Show", Venue: "Hall",
		StartsAt: time.Now().Add(24 * time.Hour)}, store.DemoSeats(1, 2, 1000))
	if err != nil {
		t.Fatal(err)
	}
	place := func(user, show int64, seat string) string {
		t.Helper()
		rec := a.do("POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":%d,"show_id":%d,"seat_ids":[%q]}`, user, show, seat))
		var o orderJSON
		if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &o) != nil {
			t.Fatalf("place: %d %s", rec.Code, rec.Body)
		}
		return o.OrderNo
	}
	orders := []string{place(1, a.show.ID, "A-1"), place(2, a.show.ID, "A-2"), place(3, other.ID, "A-1")}
	if rec := a.do("POST", "/api/v1/orders/"+orders[1]+"/cancel", `{"user_id":2}`); rec.Code != http.StatusOK {
		t.Fatalf("cancel: %d %s", rec.Code, rec.Body)
	}
	for _, tc := range orderFilterCases {
		t.Run(tc.name, func(t *testing.T) {
			rec := a.do("GET", "/api/v1/orders?"+tc.query(a.show.ID, other.ID), "")
			if tc.code != "" {
				if rec.Code != http.StatusBadRequest || errorCode(t, rec) != tc.code {
					t.Fatalf("%d %s, want 400 %s", rec.Code, rec.Body, tc.code)
				}
				return
			}
			var page orderPageJSON
			if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &page) != nil {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			var got, want []string
			for _, o := range page.Orders {
				got = append(got, o.OrderNo)
			}
			for _, i := range tc.want {
				want = append(want, orders[i])
			}
			if !slices.Equal(got, want) {
				t.Errorf("orders %v, want %v", got, want)
			}
		})
	}
}
