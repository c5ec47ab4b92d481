package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"seatflow/core"
)

// orderPageJSON is one page of GET /api/v1/orders.
type orderPageJSON struct {
	Orders     []orderJSON `json:"orders"`
	NextCursor string      `json:"next_cursor,omitempty"` // absent on the last page
}

// searchParams reads an order search by the parameter names GET
// /api/v1/orders and the console's orders page share: q, show_id, status
// (comma-separated), limit and cursor. Every refusal is a KindInvalid
// error naming the parameter.
func searchParams(c echo.Context) (core.OrderSearch, error) {
	var show int64
	if v := strings.TrimSpace(c.QueryParam(paramShowID)); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return core.OrderSearch{}, &core.Error{Kind: core.KindInvalid, Code: core.ErrSearchShow.Code,
				Message: paramShowID + " must be a positive integer"}
		}
		show = n
	}
	return core.NewOrderSearch(c.QueryParam("q"), show, c.QueryParam("status"), c.QueryParam("limit"), c.QueryParam("cursor"))
}

// paramShowID names the show filter of an order search.
const paramShowID = "show_id"

// handleSearchOrders finds orders by code, order number, seat, user,
// customer or payment, newest first, one keyset page at a time.
func (s *Server) handleSearchOrders(c echo.Context) error {
	q, err := searchParams(c)
	if err != nil {
		return err
	}
	page, err := s.db.SearchOrders(c.Request().Context(), q)
	if err != nil {
		return err
	}
	out := orderPageJSON{Orders: make([]orderJSON, len(page.Orders)), NextCursor: page.Next}
	for i, o := range page.Orders {
		out.Orders[i] = newOrderJSON(o)
	}
	return c.JSON(http.StatusOK, out)
}
