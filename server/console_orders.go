package server

import (
	"encoding/csv"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/web"
)

// ordersFilters reads the orders page's filters through searchParams, by
// the API's names: the filters as typed (for the form and the links) and
// the search they ask for, or why they are refused.
func ordersFilters(c echo.Context) (web.OrdersQuery, core.OrderSearch, error) {
	q := web.OrdersQuery{Q: strings.TrimSpace(c.QueryParam("q")), Status: c.QueryParam("status"),
		Limit: c.QueryParam("limit"), Cursor: c.QueryParam("cursor")}
	search, err := searchParams(c)
	q.ShowID = search.ShowID
	switch v := c.QueryParam(web.ParamRefund); v {
	case "":
	case web.RefundFilterRequested:
		q.RefundRequested, search.RefundRequested = true, true
	default:
		return q, search, core.Invalidf("%s must be %q or absent", web.ParamRefund, web.RefundFilterRequested)
	}
	return q, search, err
}

// orders is the console's order search (the header's search box lands
// here): every status, newest first, keyset-paged; a bad filter is a
// message on the page.
func (cn *console) orders(c echo.Context) error {
	q, search, err := ordersFilters(c)
	if err == nil {
		var page core.OrderPage
		if page, err = cn.DB.SearchOrders(c.Request().Context(), search); err == nil {
			if o, ok := exactMatch(q, page.Orders); ok {
				return c.Redirect(http.StatusSeeOther, web.URL("/orders/"+o.OrderNo))
			}
			return cn.ordersPage(c, http.StatusOK, web.OrdersData{Query: q, Orders: page.Orders, Next: page.Next})
		}
	}
	return cn.refusedFilters(c, q, err)
}

// exactMatch is the order whose code or order number q is exactly, on a
// first page: what a customer reads out lands on their order, not on a
// list of one. A code is matched as NormalizeCode reads it (any case,
// dashes or not).
func exactMatch(q web.OrdersQuery, orders []core.Order) (core.Order, bool) {
	if q.Q == "" || q.Cursor != "" {
		return core.Order{}, false
	}
	code, isCode := core.NormalizeCode(q.Q)
	isCode = isCode && len(code) == core.CodeLen
	for _, o := range orders {
		if (isCode && o.Code == code) || o.OrderNo == q.Q {
			return o, true
		}
	}
	return core.Order{}, false
}

// refusedFilters shows the orders page with the message of a bad filter
// (400); any other error is an error page.
func (cn *console) refusedFilters(c echo.Context, q web.OrdersQuery, err error) error {
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Kind != core.KindInvalid {
		return err
	}
	return cn.ordersPage(c, http.StatusBadRequest, web.OrdersData{Query: q, Error: ce.Message})
}

// ordersPage renders d, with the shows the filter offers.
func (cn *console) ordersPage(c echo.Context, status int, d web.OrdersData) error {
	shows, err := cn.Engine.Shows(c.Request().Context())
	if err != nil {
		return err
	}
	d.Shows = shows
	return render(c, status, web.OrdersPage(cn.page(c, "orders.title", web.NavOrders), d))
}

// ordersCSV streams every order of the show and status filters as CSV, row
// by row as the database returns them: memory stays flat however many
// orders a show has.
func (cn *console) ordersCSV(c echo.Context) error {
	ctx := c.Request().Context()
	q, search, err := ordersFilters(c)
	if err != nil {
		return cn.refusedFilters(c, q, err)
	}
	// An export takes the show and status filters only: everything they match.
	search = core.OrderSearch{ShowID: search.ShowID, Statuses: search.Statuses}
	cn.liftWriteDeadline(c, "CSV export")
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	w.Header().Set(echo.HeaderContentDisposition, `attachment; filename="orders.csv"`)
	// Customers' names, e-mails and phones: no browser or proxy keeps them.
	w.Header().Set(echo.HeaderCacheControl, "no-store")
	w.WriteHeader(http.StatusOK)
	out := csv.NewWriter(w)
	_ = out.Write(ordersCSVHeader)
	n := 0
	err = cn.DB.EachOrder(ctx, search, func(o core.Order) error {
		if err := out.Write(orderCSVRow(o)); err != nil {
			return err
		}
		if n++; n%500 == 0 {
			out.Flush()
			w.Flush()
		}
		return out.Error()
	})
	out.Flush()
	if err != nil {
		// The header is sent: the cut-off file is all the client gets,
		// so the log says why it ended early.
		cn.Logger.ErrorContext(ctx, "console: CSV export ended early", "rows", n, "err", err)
	}
	return nil
}

var ordersCSVHeader = []string{"code", "order_no", "status", "show_id", "user_id", "seat_ids", "amount_cents",
	"created_at", "closed_at", "cancel_reason", "paid_txn_id", "customer_name", "customer_email", "customer_phone"}

func orderCSVRow(o core.Order) []string {
	closed := ""
	if !o.ClosedAt.IsZero() {
		closed = rfc3339(o.ClosedAt)
	}
	cu := o.Customer
	row := []string{o.Code, o.OrderNo, o.Status.String(), strconv.FormatInt(o.ShowID, 10),
		strconv.FormatInt(o.UserID, 10), strings.Join(o.SeatIDs, " "), strconv.FormatInt(o.AmountCents, 10),
		rfc3339(o.CreatedAt), closed, o.CancelReason, o.PaidTxnID, cu.Name, cu.Email, cu.Phone}
	// Every cell: text comes from customers, staff and the payment
	// gateway (a txn id), and no cell may be one a spreadsheet runs.
	for i, cell := range row {
		row[i] = spreadsheetSafe(cell)
	}
	return row
}

// spreadsheetSafe keeps a cell from running as a formula when the export
// is opened in a spreadsheet (CSV injection).
func spreadsheetSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
