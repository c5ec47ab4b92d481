package store

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"seatflow/core"
)

// Order search (GET /api/v1/orders, the console's search box and orders
// page). q can mean several things at once ("20260101" is a user id, a
// phone prefix and an order-number prefix), so each reading of q that
// applies is its own query on its own index, every one sorted newest first
// by the keyset (created_at, id); SearchOrders merges their pages. No
// query uses OFFSET.

var _ core.OrderSearcher = (*DB)(nil)

// kindRefundRequested is the reading of an empty q with the refund-requested
// filter: the orders of the refund requests waiting.
const kindRefundRequested = "refund_requested"

// minPrefix is the shortest q matched as a prefix: shorter ones match
// exactly only, so a one-letter q cannot read half the table.
const minPrefix = 3

// searchQuery is one reading of q as SQL: the tables (order_info is
// always o), the condition on q, and the keyset columns, which are those
// of the index the reading walks.
type searchQuery struct {
	kind      string
	from      string
	cond      string
	args      []any
	at, id    string // keyset columns: created_at and order id
	statusSet bool   // the status filter is this query's index prefix
}

var (
	digitsOnly = regexp.MustCompile(`^[0-9]{1,19}$`)
	seatID     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,15}$`)
	phoneChars = regexp.MustCompile(`^\+?[0-9 ().-]+$`)
)

// searchQueries returns the queries of s, each with s's filters, keyset
// and limit (one more row than the page, to see whether there is a next).
func (db *DB) searchQueries(s core.OrderSearch) []searchQuery {
	var qs []searchQuery
	if s.Q == "" && s.RefundRequested {
		// Driven by the waiting requests (idx_state_created), which are
		// few, rather than by every order checked for one.
		return db.finish([]searchQuery{{kind: kindRefundRequested, from: "refund r JOIN order_info o ON o.order_no = r.order_no",
			cond: "r.state = ?", args: []any{string(core.RefundRequested)}, at: "o.created_at", id: "o.id"}}, s)
	}
	if s.Q == "" {
		statuses := s.Statuses
		if len(statuses) == 0 {
			statuses = []core.OrderStatus{-1}
		}
		// One query per status, so each walks (show_id,) status, created_at
		// in order instead of sorting every match of an IN list.
		for _, st := range statuses {
			q := searchQuery{kind: "list", from: "order_info o", at: "o.created_at", id: "o.id"}
			if st >= 0 {
				q.cond, q.args, q.statusSet = "o.status = ?", []any{int(st)}, true
			}
			qs = append(qs, q)
		}
		return db.finish(qs, s)
	}
	q := s.Q
	orderTable := func(kind, cond string, args ...any) searchQuery {
		return searchQuery{kind: kind, from: "order_info o", cond: cond, args: args, at: "o.created_at", id: "o.id"}
	}
	prefixOr := func(kind, col, v string) searchQuery {
		if len(v) >= minPrefix {
			cond, arg := db.dialect.prefixMatch(col, v)
			return orderTable(kind, cond, arg)
		}
		return orderTable(kind, col+" = ?", v)
	}
	if code, ok := core.NormalizeCode(q); ok {
		if len(code) == core.CodeLen {
			qs = append(qs, orderTable("code", "o.code = ?", code))
		} else if len(code) >= minPrefix {
			qs = append(qs, prefixOr("code", "o.code", code))
		}
	}
	if !strings.ContainsAny(q, " \t") {
		no := q
		if len(no) >= 2 && strings.EqualFold(no[:2], "SF") { // order numbers are SF, digits, lower-case hex
			no = "SF" + strings.ToLower(no[2:])
		}
		qs = append(qs, prefixOr("order_no", "o.order_no", no))
		if len(q) >= minPrefix {
			cond, arg := db.dialect.prefixMatch("p.txn_id", q)
			qs = append(qs, searchQuery{kind: "txn", from: "payment p JOIN order_info o ON o.order_no = p.order_no",
				cond: cond, args: []any{arg}, at: "o.created_at", id: "o.id"})
		} else {
			qs = append(qs, searchQuery{kind: "txn", from: "payment p JOIN order_info o ON o.order_no = p.order_no",
				cond: "p.txn_id = ?", args: []any{q}, at: "o.created_at", id: "o.id"})
		}
		if email := strings.ToLower(q); strings.Contains(email, "@") {
			if _, err := core.NormalizeEmail(q); err == nil {
				qs = append(qs, orderTable("email", "o.customer_email = ?", email))
			} else {
				qs = append(qs, prefixOr("email", "o.customer_email", email))
			}
		} else if len(email) >= minPrefix {
			qs = append(qs, prefixOr("email", "o.customer_email", email))
		}
	}
	if seatID.MatchString(q) {
		qs = append(qs, searchQuery{kind: "seat", from: "order_placed_seat ps JOIN order_info o ON o.id = ps.order_id",
			cond: "ps.seat_id = ?", args: []any{q}, at: "ps.created_at", id: "ps.order_id"})
	}
	if digitsOnly.MatchString(q) {
		if uid, err := strconv.ParseInt(q, 10, 64); err == nil && uid > 0 {
			qs = append(qs, orderTable("user", "o.user_id = ?", uid))
		}
	}
	if phoneChars.MatchString(q) {
		var b strings.Builder
		for i, r := range q {
			if unicode.IsDigit(r) || (r == '+' && i == 0) {
				b.WriteRune(r)
			}
		}
		if phone := b.String(); len(strings.TrimPrefix(phone, "+")) >= minPrefix {
			qs = append(qs, prefixOr("phone", "o.customer_phone", phone))
		}
	}
	if terms := nameTerms(q); len(terms) > 0 {
		cond, arg := db.dialect.fullTextMatch(terms)
		qs = append(qs, orderTable("name", cond, arg))
	}
	return db.finish(qs, s)
}

// minNameTerm is the shortest word a name search looks for: MariaDB's
// full-text index leaves shorter words out (innodb_ft_min_token_size,
// default 3), and both databases answer alike.
const minNameTerm = 3

// nameTerms are the words of q a name search looks for: letters and
// digits only, so nothing of q reaches the full-text query syntax.
func nameTerms(q string) []string {
	words := strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var out []string
	for _, w := range words {
		if utf8.RuneCountInString(w) >= minNameTerm {
			out = append(out, w)
		}
	}
	return out
}

// finish adds s's filters, keyset and limit to every query.
func (db *DB) finish(qs []searchQuery, s core.OrderSearch) []searchQuery {
	for i := range qs {
		q := &qs[i]
		var where []string
		if q.cond != "" {
			where = append(where, q.cond)
		}
		if s.ShowID != 0 {
			where, q.args = append(where, "o.show_id = ?"), append(q.args, s.ShowID)
		}
		if s.RefundRequested && q.kind != kindRefundRequested {
			where = append(where, "EXISTS (SELECT 1 FROM refund rr WHERE rr.order_no = o.order_no AND rr.state = ?)")
			q.args = append(q.args, string(core.RefundRequested))
		}
		if len(s.Statuses) > 0 && !q.statusSet {
			where = append(where, "o.status IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(s.Statuses)), ", ")+")")
			for _, st := range s.Statuses {
				q.args = append(q.args, int(st))
			}
		}
		if s.After != nil {
			cond, args := db.dialect.before(q.at, q.id, ms(s.After.CreatedAt), s.After.ID)
			where, q.args = append(where, cond), append(q.args, args...)
		}
		q.cond = strings.Join(where, " AND ")
	}
	return qs
}

// sql is the statement of q, returning at most limit rows.
func (q searchQuery) sql() string {
	where := ""
	if q.cond != "" {
		where = " WHERE " + q.cond
	}
	return `SELECT o.id, ` + searchCols + ` FROM ` + q.from + where +
		` ORDER BY ` + q.at + ` DESC, ` + q.id + ` DESC LIMIT ?`
}

// searchCols is orderCols read through the alias o.
var searchCols = func() string {
	cols := strings.Split(orderCols, ",")
	for i, c := range cols {
		cols[i] = "o." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}()

type searchRow struct {
	ID int64 `db:"id"`
	orderRow
}

func (r searchRow) cursor() core.OrderCursor {
	return core.OrderCursor{CreatedAt: fromMS(r.CreatedAt), ID: r.ID}
}

// newer orders searchRows newest first.
func newer(a, b searchRow) int {
	return cmp.Or(cmp.Compare(b.CreatedAt, a.CreatedAt), cmp.Compare(b.ID, a.ID))
}

// SearchOrders returns one page of s. Each query reads limit+1 rows; the
// merged page is only complete down to the oldest row every full query
// still covers (a "horizon"), so the page stops there and the cursor goes on
// from it.
func (db *DB) SearchOrders(ctx context.Context, s core.OrderSearch) (core.OrderPage, error) {
	limit := s.Limit
	if limit <= 0 || limit > core.SearchMaxLimit {
		return core.OrderPage{}, &core.Error{Kind: core.KindInvalid, Code: core.ErrSearchLimit.Code,
			Message: fmt.Sprintf("limit must be from 1 to %d", core.SearchMaxLimit)}
	}
	var (
		all     []searchRow
		horizon *searchRow
	)
	for _, q := range db.searchQueries(s) {
		var rs []searchRow
		if err := db.r.SelectContext(ctx, &rs, q.sql(), append(q.args, limit+1)...); err != nil {
			return core.OrderPage{}, dbErr(err, "search orders (%s)", q.kind)
		}
		if len(rs) > limit {
			last := rs[limit-1]
			if horizon == nil || newer(last, *horizon) < 0 {
				horizon = &last
			}
			rs = rs[:limit]
		}
		all = append(all, rs...)
	}
	slices.SortFunc(all, newer)
	all = slices.CompactFunc(all, func(a, b searchRow) bool { return a.ID == b.ID })
	if horizon != nil {
		all = slices.DeleteFunc(all, func(r searchRow) bool { return newer(r, *horizon) > 0 })
	}
	page := core.OrderPage{Orders: make([]core.Order, 0, min(len(all), limit))}
	if len(all) > limit {
		all, horizon = all[:limit], &all[limit-1]
	}
	for _, r := range all {
		page.Orders = append(page.Orders, r.order())
	}
	if horizon != nil {
		page.Next = horizon.cursor().Encode()
	}
	return page, nil
}

// EachOrder streams the orders of s's show and statuses, newest first,
// straight from the rows cursor. One query: an export reads everything, so
// sorting a status IN list once is cheaper than merging several.
func (db *DB) EachOrder(ctx context.Context, s core.OrderSearch, fn func(core.Order) error) error {
	if s.Q != "" {
		return core.Invalidf("an export takes the show and status filters, not q")
	}
	q := db.finish([]searchQuery{{kind: "export", from: "order_info o", at: "o.created_at", id: "o.id"}}, s)[0]
	where := ""
	if q.cond != "" {
		where = " WHERE " + q.cond
	}
	rows, err := db.r.QueryxContext(ctx, `SELECT o.id, `+searchCols+` FROM order_info o`+where+
		` ORDER BY o.created_at DESC, o.id DESC`, q.args...)
	if err != nil {
		return dbErr(err, "export orders")
	}
	defer rows.Close()
	for rows.Next() {
		var r searchRow
		if err := rows.StructScan(&r); err != nil {
			return dbErr(err, "export orders: scan")
		}
		if err := fn(r.order()); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return dbErr(err, "export orders")
	}
	return nil
}
