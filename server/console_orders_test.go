package server

import (
	"context"
	"encoding/csv"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
)

// The orders page finds an order by each kind of query in every status;
// bad filters are a message; the CSV export has every order of the
// filters, customer text made safe for spreadsheets.
func TestConsoleOrders(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	b := env.login(access.RoleBoxOffice)
	placeFor := func(user int64, cu core.Customer, seats ...string) core.Order {
		t.Helper()
		o, err := env.engine.Place(ctx, core.PlaceRequest{UserID: user, ShowID: env.show.ID, SeatIDs: seats, Customer: cu})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	pending := placeFor(31, core.Customer{Name: "Ada Lovelace", Email: "ada@example.org", Phone: "+441234567"}, "A-1")
	paid := placeFor(32, core.Customer{Name: "=HYPERLINK(\"x\")", Email: "grace@example.org"}, "B-2")
	env.pay(paid)
	cancelled := placeFor(33, core.Customer{Name: "Alan Turing"}, "C-3")
	if _, err := env.engine.Cancel(ctx, cancelled.OrderNo, 33); err != nil {
		t.Fatal(err)
	}
	paidOrder, _, err := env.engine.Order(ctx, paid.OrderNo)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, query string
		status      int
		want        []core.Order
		message     string
	}{
		// An exact code or order number lands on the order (Location).
		{"code", "q=" + pending.Code, 303, []core.Order{pending}, ""},
		{"code in lower case", "q=" + strings.ToLower(pending.Code), 303, []core.Order{pending}, ""},
		{"code with a dash", "q=" + pending.Code[:4] + "-" + pending.Code[4:], 303, []core.Order{pending}, ""},
		{"order number", "q=" + cancelled.OrderNo, 303, []core.Order{cancelled}, ""},
		{"code prefix", "q=" + pending.Code[:5], 200, []core.Order{pending}, ""},
		{"order number prefix", "q=" + cancelled.OrderNo[:len(cancelled.OrderNo)-1], 200, []core.Order{cancelled}, ""},
		{"seat", "q=B-2", 200, []core.Order{paid}, ""},
		{"email", "q=ada@example.org", 200, []core.Order{pending}, ""},
		{"name word", "q=Turing", 200, []core.Order{cancelled}, ""},
		{"txn id", "q=" + paidOrder.PaidTxnID, 200, []core.Order{paid}, ""},
		{"status filter", "status=paid", 200, []core.Order{paid}, ""},
		{"everything", "", 200, []core.Order{cancelled, paid, pending}, ""},
		{"bad status", "status=lost", 400, nil, "status"},
		{"bad cursor", "cursor=zzz", 400, nil, "cursor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := b.do("GET", "/console/orders?"+tc.query, nil, nil)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %.300s", rec.Code, tc.status, rec.Body)
			}
			if tc.status == http.StatusSeeOther {
				if loc, want := rec.Header().Get("Location"), "/console/orders/"+tc.want[0].OrderNo; loc != want {
					t.Errorf("Location %q, want %q", loc, want)
				}
				return
			}
			body := rec.Body.String()
			if tc.message != "" {
				if !strings.Contains(body, `id="orders-error"`) || !strings.Contains(body, tc.message) {
					t.Errorf("page lacks the error about %q", tc.message)
				}
				return
			}
			if n := strings.Count(body, `id="order-SF`); n != len(tc.want) {
				t.Errorf("%d rows, want %d", n, len(tc.want))
			}
			last := -1
			for _, o := range tc.want {
				i := strings.Index(body, `id="order-`+o.OrderNo+`"`)
				if i < 0 || i < last {
					t.Errorf("order %s missing or out of order (newest first)", o.OrderNo)
				}
				last = i
			}
		})
	}
	if page := b.do("GET", "/console/", nil, nil).Body.String(); !strings.Contains(page, `id="header-search"`) {
		t.Error("the header has no search box")
	}

	rec := b.do("GET", "/console/orders.csv", nil, nil)
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/csv") {
		t.Fatalf("csv: status %d, type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || strings.Join(rows[0], ",") != strings.Join(ordersCSVHeader, ",") {
		t.Fatalf("csv rows %q", rows)
	}
	byNo := map[string][]string{}
	for _, r := range rows[1:] {
		byNo[r[1]] = r
	}
	if r := byNo[paid.OrderNo]; r == nil || r[2] != "paid" || r[11] != `'=HYPERLINK("x")` || r[10] != paidOrder.PaidTxnID {
		t.Errorf("paid row %q", r)
	}
	if r := byNo[pending.OrderNo]; r == nil || r[0] != pending.Code || r[5] != "A-1" || r[13] != "'+441234567" {
		t.Errorf("pending row %q", r)
	}
	filtered, err := csv.NewReader(b.do("GET", "/console/orders.csv?status=cancelled", nil, nil).Body).ReadAll()
	if err != nil || len(filtered) != 2 || filtered[1][1] != cancelled.OrderNo {
		t.Errorf("cancelled export %q %v", filtered, err)
	}
	if rec := b.do("GET", "/console/orders.csv?status=lost", nil, nil); rec.Code != http.StatusBadRequest {
		t.Errorf("csv with a bad status: %d, want 400", rec.Code)
	}
}

// TestConsoleOrderFilters: the orders page reads its filters by the API's
// names and rules (orderFilterCases, run on GET /api/v1/orders too); a bad
// filter is a message on the page, and the form, the next-page link and
// the CSV export carry the same names.
func TestConsoleOrderFilters(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	b := env.login(access.RoleBoxOffice)
	other := env.stack.NewShow(t, 1, 2)
	first, second := env.place(1, "A-1"), env.place(2, "A-2")
	if _, err := env.engine.Cancel(ctx, second.OrderNo, 2); err != nil {
		t.Fatal(err)
	}
	third, err := env.engine.Place(ctx, core.PlaceRequest{UserID: 3, ShowID: other.ID, SeatIDs: []string{"A-1"}})
	if err != nil {
		t.Fatal(err)
	}
	orders := []core.Order{first, second, third}
	for _, tc := range orderFilterCases {
		t.Run(tc.name, func(t *testing.T) {
			rec := b.do("GET", "/console/orders?"+tc.query(env.show.ID, other.ID), nil, nil)
			body := rec.Body.String()
			if tc.code != "" {
				param := strings.TrimPrefix(tc.code, "invalid_")
				if rec.Code != http.StatusBadRequest || !strings.Contains(body, `id="orders-error"`) || !strings.Contains(body, param) {
					t.Fatalf("status %d, want 400 and a message about %s on the page: %.300s", rec.Code, param, body)
				}
				return
			}
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %.300s", rec.Code, body)
			}
			if n := strings.Count(body, `id="order-SF`); n != len(tc.want) {
				t.Errorf("%d rows, want %d", n, len(tc.want))
			}
			last := -1
			for _, i := range tc.want {
				at := strings.Index(body, `id="order-`+orders[i].OrderNo+`"`)
				if at < 0 || at < last {
					t.Errorf("order %d missing or out of order (newest first)", i)
				}
				last = at
			}
		})
	}

	page := b.do("GET", fmt.Sprintf("/console/orders?show_id=%d&limit=1", env.show.ID), nil, nil).Body.String()
	if !strings.Contains(page, `<select name="show_id">`) {
		t.Error("the filter form does not name its show filter show_id")
	}
	next := regexp.MustCompile(`href="([^"]*)" rel="next" id="orders-next"`).FindStringSubmatch(page)
	if next == nil {
		t.Fatal("no next-page link after one of two orders")
	}
	link := html.UnescapeString(next[1])
	if !strings.Contains(link, fmt.Sprintf("show_id=%d", env.show.ID)) || !strings.Contains(link, "limit=1") {
		t.Errorf("next-page link %q lost the filters", link)
	}
	if n := strings.Count(b.do("GET", link, nil, nil).Body.String(), `id="order-SF`); n != 1 {
		t.Errorf("the next page has %d orders, want 1", n)
	}
	csvLink := regexp.MustCompile(`href="([^"]*)" id="orders-csv"`).FindStringSubmatch(page)
	if csvLink == nil || !strings.Contains(html.UnescapeString(csvLink[1]), fmt.Sprintf("show_id=%d", env.show.ID)) {
		t.Errorf("CSV link %q does not carry the show filter", csvLink)
	}

	rows, err := csv.NewReader(b.do("GET", fmt.Sprintf("/console/orders.csv?show_id=%d", other.ID), nil, nil).Body).ReadAll()
	if err != nil || len(rows) != 2 || rows[1][1] != third.OrderNo {
		t.Errorf("export of the other show: %q %v, want its one order", rows, err)
	}
	rec := b.do("GET", "/console/orders.csv?show_id=abc", nil, nil)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `id="orders-error"`) {
		t.Errorf("export with a bad show id: %d, want 400 and the message on the orders page: %.300s", rec.Code, rec.Body)
	}
}
