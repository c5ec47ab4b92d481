package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"seatflow/core"
)

// searchFixture is one order in each status, each with its own customer,
// seats, code and payment, on one show.
type searchFixture struct {
	orders []core.Order // pending, paid, cancelled
}

func newSearchFixture(t *testing.T, db *DB) searchFixture {
	t.Helper()
	ctx := context.Background()
	show := mkShow(t, db, 5, 10)
	people := []core.Customer{
		{Name: "Marguerite Pendlebury", Email: "marguerite.p@example.com", Phone: "+442079460101"},
		{Name: "Octavia Thistlewood", Email: "octavia.t@example.org", Phone: "+442079460202"},
		{Name: "Bartholomew Ashcombe", Email: "bart.a@example.net", Phone: "+442079460303"},
	}
	var f searchFixture
	for i, st := range []core.OrderStatus{core.StatusPending, core.StatusPaid, core.StatusCancelled} {
		o := pending(fmt.Sprintf("SF20260304050607aa11bb22cc%02d", i), show.ID, int64(9001+i), t0.Add(time.Duration(i)*time.Minute),
			fmt.Sprintf("C-%d", i+1), fmt.Sprintf("D-%d", i+1))
		o.Code = fmt.Sprintf("K1P0Z7M%d", i+2)
		o.Customer = people[i]
		mustPlace(t, db, o)
		if err := db.InTx(ctx, func(tx core.Tx) error {
			if _, err := tx.InsertPayment(ctx, core.Payment{TxnID: fmt.Sprintf("TXN-ALPHA-%d", i), OrderNo: o.OrderNo,
				AmountCents: o.AmountCents, PaidAt: t0, ReceivedAt: t0}); err != nil {
				return err
			}
			if st == core.StatusPending {
				return nil
			}
			_, err := tx.TransitionPending(ctx, o.OrderNo, st, core.Transition{At: t0.Add(time.Hour), Reason: "x"})
			if err != nil || st != core.StatusCancelled {
				return err
			}
			_, err = tx.DeleteOrderSeats(ctx, o.OrderNo)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		o.Status = st
		f.orders = append(f.orders, o)
	}
	return f
}

// TestSearchKinds: every reading of q finds its order whatever its status,
// and only the orders it should.
func TestSearchKinds(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		f := newSearchFixture(t, db)
		for i, o := range f.orders {
			lowerConfusable := strings.NewReplacer("1", "l", "0", "o").Replace(strings.ToLower(o.Code))
			tests := []struct {
				kind, q string
				want    []int // indexes into f.orders, newest first
			}{
				{"code", o.Code, []int{i}},
				{"code lower-case with confusables", lowerConfusable, []int{i}},
				{"code with I for 1", strings.Replace(o.Code, "1", "I", 1), []int{i}},
				{"code prefix", o.Code[:5], []int{2, 1, 0}},
				{"order number", o.OrderNo, []int{i}},
				{"order number prefix, lower-case", strings.ToLower(o.OrderNo[:20]), []int{2, 1, 0}},
				{"seat", o.SeatIDs[1], []int{i}},
				{"user id", fmt.Sprint(o.UserID), []int{i}},
				{"email", o.Customer.Email, []int{i}},
				{"email upper-case", strings.ToUpper(o.Customer.Email), []int{i}},
				{"email prefix", o.Customer.Email[:6], []int{i}},
				{"phone", o.Customer.Phone, []int{i}},
				{"phone as typed", "+44 20-7946 0" + o.Customer.Phone[10:], []int{i}},
				{"phone prefix", "+44 2079", []int{2, 1, 0}},
				{"txn id", fmt.Sprintf("TXN-ALPHA-%d", i), []int{i}},
				{"txn id prefix", "TXN-ALP", []int{2, 1, 0}},
				{"name", o.Customer.Name, []int{i}},
				{"surname lower-case", strings.ToLower(strings.Fields(o.Customer.Name)[1]), []int{i}},
				{"name prefix", strings.Fields(o.Customer.Name)[1][:5], []int{i}},
			}
			for _, tt := range tests {
				t.Run(o.Status.String()+"/"+tt.kind, func(t *testing.T) {
					page, err := db.SearchOrders(context.Background(), core.OrderSearch{Q: tt.q, Limit: 50})
					if err != nil {
						t.Fatal(err)
					}
					var want []string
					for _, w := range tt.want {
						want = append(want, f.orders[w].OrderNo)
					}
					if got := orderNos(page.Orders); !slices.Equal(got, want) {
						t.Errorf("q=%q: got %v, want %v", tt.q, got, want)
					}
					if page.Next != "" {
						t.Errorf("q=%q: a next page after %d orders", tt.q, len(page.Orders))
					}
				})
			}
		}
		t.Run("status and show filters", func(t *testing.T) {
			for i, o := range f.orders {
				page, err := db.SearchOrders(context.Background(), core.OrderSearch{Q: "TXN-ALP", ShowID: o.ShowID,
					Statuses: []core.OrderStatus{o.Status}, Limit: 50})
				if err != nil {
					t.Fatal(err)
				}
				if got := orderNos(page.Orders); !slices.Equal(got, []string{f.orders[i].OrderNo}) {
					t.Errorf("status %s: got %v", o.Status, got)
				}
				page, err = db.SearchOrders(context.Background(), core.OrderSearch{ShowID: o.ShowID + 1000, Limit: 50})
				if err != nil || len(page.Orders) != 0 {
					t.Errorf("other show: %v, %v", page.Orders, err)
				}
			}
		})
		got := searchCustomer(t, db, f.orders[1].Code)
		if got != f.orders[1].Customer {
			t.Errorf("customer read back as %+v, want %+v", got, f.orders[1].Customer)
		}
	})
}

func searchCustomer(t *testing.T, db *DB, code string) core.Customer {
	t.Helper()
	no, err := db.OrderNoByCode(context.Background(), code)
	if err != nil {
		t.Fatal(err)
	}
	o, err := db.Order(context.Background(), no)
	if err != nil {
		t.Fatal(err)
	}
	if o.Code != code {
		t.Errorf("order %s has code %q, want %q", no, o.Code, code)
	}
	return o.Customer
}

func orderNos(os []core.Order) []string {
	out := []string{}
	for _, o := range os {
		out = append(out, o.OrderNo)
	}
	return out
}

// TestSearchPaging walks every page of searches whose q matches through
// several indexes at once, with ties on created_at: each order comes once,
// newest first, and the pages end.
func TestSearchPaging(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		show := mkShow(t, db, 5, 10)
		seats := DemoSeats(5, 10, 1)
		var all []string
		for i := range 40 {
			o := pending(fmt.Sprintf("PG%03d", i), show.ID, int64(i+1), t0.Add(time.Duration(i/4)*time.Second), seats[i].SeatID)
			// "pagetest" is an email prefix of the even orders and a name of the odd ones.
			if i%2 == 0 {
				o.Customer.Email = fmt.Sprintf("pagetest%d@example.com", i)
			} else {
				o.Customer.Name = "Pagetest Person"
			}
			mustPlace(t, db, o)
			all = append(all, o.OrderNo)
		}
		slices.Reverse(all) // newest first; within a second, the later id first
		for _, tc := range []struct {
			q      string
			status []core.OrderStatus
		}{{"pagetest", nil}, {"", nil}, {"", []core.OrderStatus{core.StatusPending, core.StatusPaid}}} {
			for _, size := range []int{1, 3, 7, 50} {
				var got []string
				s := core.OrderSearch{Q: tc.q, Statuses: tc.status, Limit: size}
				for pages := 0; ; pages++ {
					if pages > 100 {
						t.Fatal("paging does not end")
					}
					page, err := db.SearchOrders(context.Background(), s)
					if err != nil {
						t.Fatal(err)
					}
					if len(page.Orders) > size {
						t.Fatalf("page of %d for limit %d", len(page.Orders), size)
					}
					got = append(got, orderNos(page.Orders)...)
					if page.Next == "" {
						break
					}
					if s.After, err = core.ParseOrderCursor(page.Next); err != nil {
						t.Fatal(err)
					}
				}
				if !slices.Equal(got, all) {
					t.Errorf("q=%q size %d: got %v\nwant %v", tc.q, size, got, all)
				}
			}
		}
		var exported []string
		if err := db.EachOrder(context.Background(), core.OrderSearch{ShowID: show.ID}, func(o core.Order) error {
			exported = append(exported, o.OrderNo)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(exported, all) {
			t.Errorf("export: got %v, want %v", exported, all)
		}
	})
}

// TestOrderCodeTaken: a second order with a code already taken is
// ErrCodeTaken, and the transaction can go on to insert it with another.
func TestOrderCodeTaken(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		show := mkShow(t, db, 2, 2)
		a := pending("CT1", show.ID, 1, t0, "A-1")
		a.Code = "ZZZZZZZZ"
		mustPlace(t, db, a)
		b := pending("CT2", show.ID, 2, t0, "A-2")
		b.Code = a.Code
		err := db.InTx(ctx, func(tx core.Tx) error {
			err := tx.InsertOrder(ctx, b)
			if !errors.Is(err, core.ErrCodeTaken) {
				return fmt.Errorf("duplicate code: got %v, want ErrCodeTaken", err)
			}
			b.Code = "ZZZZZZZY"
			return tx.InsertOrder(ctx, b)
		})
		if err != nil {
			t.Fatal(err)
		}
		if no, err := db.OrderNoByCode(ctx, "ZZZZZZZY"); err != nil || no != "CT2" {
			t.Errorf("second order: %q, %v", no, err)
		}
		if _, err := db.OrderNoByCode(ctx, "ZZZZZZZX"); !errors.Is(err, core.ErrOrderNotFound) {
			t.Errorf("unknown code: %v", err)
		}
	})
}

// seedSearchOrders inserts n orders in one INSERT ... SELECT from a number
// sequence (MariaDB's Sequence engine, a recursive CTE on SQLite), with
// every searchable field derived from the row number k:
//
//	order_no SFSEED<k, 10 digits>   code: the migration's id formula on k
//	user (k % 100000) + 1           show 900000 + k % 100, status k % 3
//	seat S-<k % 500>                name "Given<k % 1000> Family<k>"
//	email user<k>@example.com       phone +4930<k, 8 digits>
//	paid orders: payment TXN<k>     created t0 + k seconds
func seedSearchOrders(t testing.TB, db *DB, n int) {
	t.Helper()
	ctx := context.Background()
	base := ms(t0)
	var k, cat, lpad string
	seq := func(lo, hi int) string {
		if db.Dialect() == MySQL {
			return fmt.Sprintf("seq_%d_to_%d", lo, hi)
		}
		return fmt.Sprintf("(WITH RECURSIVE s(k) AS (SELECT %d UNION ALL SELECT k + 1 FROM s WHERE k < %d) SELECT k FROM s)", lo, hi)
	}
	if db.Dialect() == MySQL {
		k, cat, lpad = "seq", "CONCAT(%s)", "LPAD(%s, %d, '0')"
	} else {
		k, cat, lpad = "k", "(%s)", "printf('%%0*d', %[2]d, %[1]s)"
	}
	concat := func(parts ...string) string {
		sep := ", "
		if db.Dialect() == SQLite {
			sep = " || "
		}
		return fmt.Sprintf(cat, strings.Join(parts, sep))
	}
	pad := func(expr string, w int) string { return fmt.Sprintf(lpad, expr, w) }
	var code []string
	for shift := 35; shift >= 0; shift -= 5 {
		code = append(code, fmt.Sprintf("substr('%s', (((%s * 2654435761) & 1099511627775) >> %d & 31) + 1, 1)", core.CodeAlphabet, k, shift))
	}
	insertOrders := `INSERT INTO order_info (order_no, show_id, user_id, status, amount_cents, seat_count, seat_ids, created_at,
 expire_at, closed_at, paid_txn_id, code, customer_name, customer_email, customer_phone)
 SELECT ` + concat("'SFSEED'", pad(k, 10)) + `, 900000 + ` + k + ` % 100, ` + k + ` % 100000 + 1, ` + k + ` % 3, 1000, 1, ` +
		concat("'S-'", k+" % 500") + fmt.Sprintf(`, %d + %s * 1000, %d + %s * 1000 + 900000, `, base, k, base, k) +
		fmt.Sprintf(`CASE WHEN %s %% 3 = 0 THEN 0 ELSE %d + %s * 1000 + 60000 END, `, k, base, k) +
		fmt.Sprintf(`CASE WHEN %s %% 3 = 1 THEN %s ELSE '' END, `, k, concat("'TXN'", k)) +
		concat(code...) + `, ` + concat("'Given'", k+" % 1000", "' Family'", k) + `, ` +
		concat("'user'", k, "'@example.com'") + `, ` + concat("'+4930'", pad(k, 8)) + ` FROM `
	// Chunks of 100,000 rows: each statement well inside the driver's read timeout.
	const chunk = 100_000
	var stmts []string
	for lo := 1; lo <= n; lo += chunk {
		stmts = append(stmts, insertOrders+seq(lo, min(lo+chunk-1, n)))
	}
	stmts = append(stmts,
		`INSERT INTO order_placed_seat (seat_id, created_at, order_id) SELECT seat_ids, created_at, id FROM order_info WHERE order_no LIKE 'SFSEED%'`,
		`INSERT INTO payment (txn_id, order_no, amount_cents, paid_at, received_at, result)
 SELECT paid_txn_id, order_no, 1000, closed_at, closed_at, 'paid' FROM order_info WHERE paid_txn_id LIKE 'TXN%'`)
	for _, s := range stmts {
		start := time.Now()
		if _, err := db.X().ExecContext(ctx, s); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
		if n >= chunk {
			t.Logf("%v: %.60s", time.Since(start).Round(time.Millisecond), strings.Join(strings.Fields(s), " "))
		}
	}
	stats := "ANALYZE"
	if db.Dialect() == MySQL {
		stats = "ANALYZE TABLE order_info, order_placed_seat, payment"
	}
	if _, err := db.X().ExecContext(ctx, stats); err != nil {
		t.Fatal(err)
	}
}

// searchCases are searches of every kind over seedSearchOrders' rows.
var searchCases = []struct {
	name string
	s    core.OrderSearch
}{
	{"code", core.OrderSearch{Q: seededCode(12345)}},
	{"code prefix", core.OrderSearch{Q: seededCode(12345)[:4]}},
	{"order number", core.OrderSearch{Q: "SFSEED0000012345"}},
	{"order number prefix", core.OrderSearch{Q: "sfseed000001234"}},
	{"seat", core.OrderSearch{Q: "S-77"}},
	{"user id", core.OrderSearch{Q: "4242"}},
	{"email", core.OrderSearch{Q: "user4242@example.com"}},
	{"email prefix", core.OrderSearch{Q: "user4242"}},
	{"phone", core.OrderSearch{Q: "+49 30 0000 4242"}},
	{"phone prefix", core.OrderSearch{Q: "+4930000042"}},
	{"txn id", core.OrderSearch{Q: "TXN4243"}},
	{"txn id prefix", core.OrderSearch{Q: "TXN42"}},
	{"name", core.OrderSearch{Q: "Family4242"}},
	{"name prefix, two words", core.OrderSearch{Q: "given242 famil"}},
	{"all", core.OrderSearch{}},
	{"one status", core.OrderSearch{Statuses: []core.OrderStatus{core.StatusPaid}}},
	{"two statuses", core.OrderSearch{Statuses: []core.OrderStatus{core.StatusPending, core.StatusCancelled}}},
	{"show", core.OrderSearch{ShowID: 900042}},
	{"show and status", core.OrderSearch{ShowID: 900042, Statuses: []core.OrderStatus{core.StatusPaid}}},
	{"name with cursor", core.OrderSearch{Q: "Given242", After: &core.OrderCursor{CreatedAt: t0.Add(500 * time.Second), ID: 500}}},
	{"list with cursor", core.OrderSearch{After: &core.OrderCursor{CreatedAt: t0.Add(500 * time.Second), ID: 500}}},
}

// seededCode is the code seedSearchOrders gives row k.
func seededCode(k int64) string {
	v := (k * 2654435761) & (1<<40 - 1)
	b := make([]byte, core.CodeLen)
	for i := range b {
		b[i] = core.CodeAlphabet[v>>(35-5*i)&31]
	}
	return string(b)
}

// searchIndexes are the indexes each kind of search query must read
// through (patterns of the plan), and whether it may sort its matches (a range of a prefix or a
// full-text match is not in created_at order; its matches are few).
func searchIndexes(d Dialect) map[string]struct {
	want  []string
	sorts bool
} {
	type plan = struct {
		want  []string
		sorts bool
	}
	if d == MySQL {
		return map[string]plan{
			"list":     {[]string{"idx_"}, false},                                                           // idx_created, idx_status_created, idx_show_(status_)created
			"code":     {[]string{"key=uk_code|Impossible WHERE noticed after reading const tables"}, true}, // the latter: no such code
			"order_no": {[]string{"key=uk_order_no"}, true},
			"seat":     {[]string{"table=ps type=(ref|range) key=PRIMARY", "table=o type=eq_ref key=PRIMARY"}, false},
			"user":     {[]string{"key=idx_user_created"}, false},
			"email":    {[]string{"key=idx_email_created"}, true},
			"phone":    {[]string{"key=idx_phone_created"}, true},
			"txn":      {[]string{"table=p type=range key=uk_txn", "table=o type=eq_ref key=uk_order_no"}, true},
			"name":     {[]string{"type=fulltext key=ft_customer_name"}, true},
		}
	}
	return map[string]plan{
		"list":     {[]string{"USING INDEX order_info_idx_"}, false},
		"code":     {[]string{"USING INDEX order_info_uk_code"}, true},
		"order_no": {[]string{"USING INDEX order_info_uk_order_no"}, true},
		"seat":     {[]string{`SEARCH ps USING PRIMARY KEY \(seat_id=\?`, "SEARCH o USING INTEGER PRIMARY KEY"}, false},
		"user":     {[]string{"USING INDEX order_info_idx_user_created"}, false},
		"email":    {[]string{"USING INDEX order_info_idx_email_created"}, true},
		"phone":    {[]string{"USING INDEX order_info_idx_phone_created"}, true},
		"txn":      {[]string{"SEARCH p USING INDEX payment_uk_txn", "SEARCH o USING INDEX order_info_uk_order_no"}, true},
		"name":     {[]string{"VIRTUAL TABLE INDEX", "SEARCH o USING INTEGER PRIMARY KEY"}, true},
	}
}

// fullScan finds a plan line that reads a whole table.
var fullScan = regexp.MustCompile(`(?m)type=ALL|^SCAN [a-z_]+$`)

// assertSearchPlans checks the plan of every query of every search case.
func assertSearchPlans(t *testing.T, db *DB) {
	t.Helper()
	plans := searchIndexes(db.Dialect())
	seen := map[string]bool{}
	for _, tc := range searchCases {
		s := tc.s
		s.Limit = core.SearchDefaultLimit
		for _, q := range db.searchQueries(s) {
			seen[q.kind] = true
			plan := fullPlan(t, db, q.sql(), append(q.args, s.Limit+1)...)
			t.Logf("%s, %s (%s):\n%s", tc.name, q.kind, db.Dialect(), plan)
			want, ok := plans[q.kind]
			if !ok {
				t.Errorf("%s: no expected plan for query kind %s", tc.name, q.kind)
				continue
			}
			for _, w := range want.want {
				if !regexp.MustCompile(w).MatchString(plan) {
					t.Errorf("%s, %s: plan does not have %q:\n%s", tc.name, q.kind, w, plan)
				}
			}
			if fullScan.MatchString(plan) {
				t.Errorf("%s, %s: full scan:\n%s", tc.name, q.kind, plan)
			}
			if !want.sorts && (strings.Contains(plan, "filesort") || strings.Contains(plan, "TEMP B-TREE")) {
				t.Errorf("%s, %s: sorts although its index is in order:\n%s", tc.name, q.kind, plan)
			}
		}
	}
	for kind := range plans {
		if !seen[kind] {
			t.Errorf("no search case runs a %s query", kind)
		}
	}
}

// TestSearchQueryPlans: every query of every kind of search reads through
// its index, on both dialects.
func TestSearchQueryPlans(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		seedSearchOrders(t, db, 20000)
		assertSearchPlans(t, db)
	})
}

// TestSearchMillion is the search on 1,000,000 orders on MariaDB: the plans
// again, and each kind of search answers (its time printed, not asserted).
// It runs in the full suite (make test, so once in CI), not with -short.
func TestSearchMillion(t *testing.T) {
	if testing.Short() && os.Getenv("CI") == "" {
		t.Skip("1,000,000 orders: not with -short")
	}
	db := openTestMySQL(t)
	start := time.Now()
	seedSearchOrders(t, db, 1_000_000)
	t.Logf("seeded 1,000,000 orders in %v", time.Since(start).Round(time.Millisecond))
	assertSearchPlans(t, db)
	for _, tc := range searchCases {
		s := tc.s
		s.Limit = core.SearchDefaultLimit
		start := time.Now()
		page, err := db.SearchOrders(context.Background(), s)
		took := time.Since(start)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(page.Orders) == 0 {
			t.Errorf("%s: found nothing", tc.name)
		}
		t.Logf("%-24s %3d orders in %v", tc.name, len(page.Orders), took.Round(time.Microsecond))
	}
}
