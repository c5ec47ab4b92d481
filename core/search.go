package core

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// SearchableStatuses are the statuses an order search may filter on; a new
// ending is searchable once it is listed here.
var SearchableStatuses = []OrderStatus{StatusPending, StatusPaid, StatusCancelled, StatusRefunded}

// Search limits.
const (
	SearchDefaultLimit = 50
	SearchMaxLimit     = 200
	SearchMaxQuery     = 254 // the longest thing q can match: an email
)

// Errors of a bad search, each naming its parameter.
var (
	ErrSearchQuery  = &Error{Kind: KindInvalid, Code: "invalid_query", Message: "q is invalid"}
	ErrSearchLimit  = &Error{Kind: KindInvalid, Code: "invalid_limit", Message: "limit is invalid"}
	ErrSearchCursor = &Error{Kind: KindInvalid, Code: "invalid_cursor", Message: "cursor is invalid"}
	ErrSearchStatus = &Error{Kind: KindInvalid, Code: "invalid_status", Message: "status is invalid"}
	ErrSearchShow   = &Error{Kind: KindInvalid, Code: "invalid_show_id", Message: "show_id is invalid"}
)

// OrderSearch asks for orders, newest first: those q matches (every order
// when q is empty), of one show (ShowID 0: any) and of the listed statuses
// (none: any), after the cursor (nil: from the newest).
type OrderSearch struct {
	Q        string
	ShowID   int64
	Statuses []OrderStatus
	Limit    int
	After    *OrderCursor
	// RefundRequested keeps only orders with a refund request waiting for
	// approval (the console's filter of them).
	RefundRequested bool
}

// OrderCursor is the keyset position of a page: the last order it showed.
// Orders are sorted by (created_at, id) descending; the id breaks ties.
type OrderCursor struct {
	CreatedAt time.Time
	ID        int64
}

// OrderPage is one page of a search; Next is the cursor of the next page,
// "" on the last one.
type OrderPage struct {
	Orders []Order
	Next   string
}

// OrderSearcher runs searches; core/store implements it.
type OrderSearcher interface {
	SearchOrders(ctx context.Context, s OrderSearch) (OrderPage, error)
	// EachOrder calls fn for every order of s's show and statuses (s.Q must
	// be empty), newest first, as the rows arrive: an export of any size
	// in constant memory. An error from fn stops the iteration.
	EachOrder(ctx context.Context, s OrderSearch, fn func(Order) error) error
}

// Encode is the cursor as an opaque URL-safe token.
func (c OrderCursor) Encode() string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d.%d", c.CreatedAt.UnixMilli(), c.ID))
}

// ParseOrderCursor reads a token made by Encode ("" is no cursor).
func ParseOrderCursor(s string) (*OrderCursor, error) {
	if s == "" {
		return nil, nil
	}
	bad := &Error{Kind: KindInvalid, Code: ErrSearchCursor.Code, Message: "cursor is not one this server returned"}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	at, id, ok := strings.Cut(string(raw), ".")
	if !ok {
		return nil, bad
	}
	ms, err1 := strconv.ParseInt(at, 10, 64)
	n, err2 := strconv.ParseInt(id, 10, 64)
	if err1 != nil || err2 != nil || ms <= 0 || n <= 0 {
		return nil, bad
	}
	return &OrderCursor{CreatedAt: time.UnixMilli(ms).UTC(), ID: n}, nil
}

// ParseStatuses reads a comma-separated list of status names ("" is any).
func ParseStatuses(s string) ([]OrderStatus, error) {
	var out []OrderStatus
	for name := range strings.SplitSeq(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		st, ok := statusNamed(name)
		if !ok {
			return nil, &Error{Kind: KindInvalid, Code: ErrSearchStatus.Code,
				Message: fmt.Sprintf("status %q is not one of %s", name, statusNames())}
		}
		out = append(out, st)
	}
	return out, nil
}

func statusNamed(name string) (OrderStatus, bool) {
	for _, st := range SearchableStatuses {
		if st.String() == name {
			return st, true
		}
	}
	return 0, false
}

func statusNames() string {
	names := make([]string, len(SearchableStatuses))
	for i, st := range SearchableStatuses {
		names[i] = st.String()
	}
	return strings.Join(names, ", ")
}

// NewOrderSearch checks the parameters of a search as they come from a
// request (limit "" is the default) and builds it.
func NewOrderSearch(q string, showID int64, statuses, limit, cursor string) (OrderSearch, error) {
	s := OrderSearch{Q: strings.TrimSpace(q), ShowID: showID, Limit: SearchDefaultLimit}
	if !utf8.ValidString(s.Q) || utf8.RuneCountInString(s.Q) > SearchMaxQuery {
		return OrderSearch{}, &Error{Kind: KindInvalid, Code: ErrSearchQuery.Code,
			Message: fmt.Sprintf("q must be UTF-8 of at most %d characters", SearchMaxQuery)}
	}
	if showID < 0 {
		return OrderSearch{}, &Error{Kind: KindInvalid, Code: ErrSearchShow.Code, Message: "show_id must be a positive integer"}
	}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || n > SearchMaxLimit {
			return OrderSearch{}, &Error{Kind: KindInvalid, Code: ErrSearchLimit.Code,
				Message: fmt.Sprintf("limit must be a whole number from 1 to %d", SearchMaxLimit)}
		}
		s.Limit = n
	}
	var err error
	if s.Statuses, err = ParseStatuses(statuses); err != nil {
		return OrderSearch{}, err
	}
	if s.After, err = ParseOrderCursor(cursor); err != nil {
		return OrderSearch{}, err
	}
	return s, nil
}
