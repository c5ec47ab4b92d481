package core

import "time"

// OrderStatus is the order state machine. Every transition out of
// StatusPending is one conditional UPDATE ... WHERE status = 0, so exactly one
// of payment, timeout, customer cancel, staff cancel and reconcile wins.
type OrderStatus int

const (
	StatusPending   OrderStatus = 0
	StatusPaid      OrderStatus = 1
	StatusCancelled OrderStatus = 2
	StatusRefunded  OrderStatus = 3 // paid, then refunded (core/refund.go)
)

func (s OrderStatus) String() string {
	switch s {
	case StatusPending:
		return "pending"
	case StatusPaid:
		return "paid"
	case StatusCancelled:
		return "cancelled"
	case StatusRefunded:
		return "refunded"
	}
	return "unknown"
}

// SeatState is a seat's state in the seat store (Redis).
type SeatState int

const (
	SeatAvailable SeatState = 0
	SeatLocked    SeatState = 1
	SeatSold      SeatState = 2
	SeatBlocked   SeatState = 3 // not for public sale; see core/shows.go
)

func (s SeatState) String() string {
	switch s {
	case SeatAvailable:
		return "available"
	case SeatLocked:
		return "locked"
	case SeatSold:
		return "sold"
	case SeatBlocked:
		return "blocked"
	}
	return "unknown"
}

// Show is one performance with a fixed seat plan.
type Show struct {
	ID       int64     `db:"id" json:"id"`
	Name     string    `db:"name" json:"name"`
	Venue    string    `db:"venue" json:"venue"`
	StartsAt time.Time `db:"-" json:"starts_at"`
	Rows     int       `db:"row_count" json:"rows"`
	Cols     int       `db:"col_count" json:"cols"`
	// Set up through the shows API (core/shows.go).
	Currency    string     `json:"currency"`
	SalesEnd    time.Time  `json:"sales_end"` // zero: until the show starts
	Status      ShowStatus `json:"status"`
	CancelledAt time.Time  `json:"cancelled_at"`
	PlanVersion int64      `json:"plan_version"`
	SeatCount   int        `json:"seat_count"`
	Best        BestRules  `json:"-"` // best-available settings (bestseats.go)
}

// SalesEndAt is when the show stops selling: its sales_end if set, else its
// start (a seat is not sold for a show already playing). Zero for a show
// with neither, which no API creates.
func (s Show) SalesEndAt() time.Time {
	if !s.SalesEnd.IsZero() {
		return s.SalesEnd
	}
	return s.StartsAt
}

// Seat is one seat of a show's plan.
type Seat struct {
	ShowID     int64  `json:"show_id"`
	SeatID     string `json:"seat_id"`
	Row        int    `json:"row"`
	Col        int    `json:"col"`
	PriceCents int64  `json:"price_cents"`
	// The seat's place on the plan as its creator gave it (core/shows.go).
	Section  string `json:"section"`
	RowLabel string `json:"row_label"`
	Number   int    `json:"number"`
	Category string `json:"category"`
	X        int    `json:"x"`
	Y        int    `json:"y"`
	// Best available (bestseats.go): the accessible kind ("", wheelchair,
	// companion), the plan's rank (0: none, scored by distance), and
	// whether the next seat of the row is across an aisle.
	Accessible string `json:"accessible,omitempty"`
	Rank       int    `json:"rank,omitempty"`
	AisleAfter bool   `json:"aisle_after,omitempty"`
}

// SeatHold is one seat's entry in the seat store. Available seats have no
// entry; OrderNo and UserID name the holder of a locked or sold seat.
type SeatHold struct {
	SeatID   string
	State    SeatState
	OrderNo  string
	UserID   int64
	LockedAt time.Time
}

// Order is an order_info row plus its seats.
type Order struct {
	OrderNo      string
	Code         string // short code (codes.go), unique like OrderNo
	ShowID       int64
	UserID       int64
	Status       OrderStatus
	AmountCents  int64
	SeatIDs      []string
	CreatedAt    time.Time
	ExpireAt     time.Time
	ClosedAt     time.Time // zero while pending
	CancelReason string
	CancelActor  string
	PaidTxnID    string
	TimeoutHop   int       // hop number of the latest timeout message sent
	TimeoutDueAt time.Time // when that message is due
	// TimeoutSend and TimeoutResendAt: whether that message is known to be
	// sent, and from when another delivery or the sweep may send it (chain.go).
	TimeoutSend     HopState
	TimeoutResendAt time.Time
	Customer        Customer // zero when placed without one
	// ClientIP is the end-user address the API placed the order from, as
	// ClientNet counts it (abuse.go); "" from the console.
	ClientIP string
	// Source is "" for an order a buyer placed, OrderSourceWaitlist for a
	// waiting-list offer (handoff.go).
	Source string
}

// Event is one line of an order's timeline (order_event).
type Event struct {
	ID      int64
	OrderNo string
	At      time.Time
	Kind    string
	Detail  map[string]any
}

// Event kinds; the timeline vocabulary shared by the API, console and tests.
const (
	EventPlaced            = "placed"
	EventTimeoutScheduled  = "timeout_scheduled"
	EventTimeoutSendFailed = "timeout_send_failed"
	EventTimeoutFired      = "timeout_fired"
	EventCancelled         = "cancelled"
	EventPaid              = "paid"
	EventPaymentDuplicate  = "payment_duplicate"
	EventDiscrepancy       = "discrepancy"
	EventAmountMismatch    = "amount_mismatch"
	EventSeatsReleased     = "seats_released"
	EventSeatReleaseFailed = "seat_release_failed"
	EventSeatsSold         = "seats_sold"
	EventSeatSellFailed    = "seat_sell_failed"
	EventRepaired          = "repaired"
)

// Cancel reasons and actors recorded on cancelled orders.
const (
	ReasonTimeout       = "timeout"
	ReasonCustomer      = "customer"
	ReasonStaff         = "staff"
	ReasonReconcile     = "reconcile"
	ActorSystem         = "system"
	ActorCustomerPrefix = "user:"
	ActorStaffPrefix    = "staff:"
)

// Payment is one payment callback as received.
type Payment struct {
	TxnID       string
	OrderNo     string
	AmountCents int64
	PaidAt      time.Time
	ReceivedAt  time.Time
	Method      string // PaymentMethodCallback when empty
	Tender      Tender // counter payments: cash or card
	Reference   string // counter payments: slip number or note
	Actor       string // counter payments: staff:<username>
	ShiftID     int64  // counter payments: the clerk's open till shift (shifts.go)
	Result      string // what it did (PaymentResult, amount_mismatch): HandlePayment sets it for the insert
}

// PaymentResult says what a payment callback did.
type PaymentResult string

const (
	PaymentApplied     PaymentResult = "paid"
	PaymentDuplicate   PaymentResult = "duplicate"
	PaymentDiscrepancy PaymentResult = "discrepancy"
)

// Discrepancy kinds: money that arrived but could not be applied.
const (
	DiscrepancyPaidAfterCancel = "paid_after_cancel"
	DiscrepancySecondPayment   = "second_payment"
	DiscrepancyAmountMismatch  = "amount_mismatch"
	DiscrepancyPaidAfterRefund = "paid_after_refund"
	DiscrepancyUnknownOrder    = "unknown_order" // no such order (a restore from backup lost it?)
	DiscrepancyTxnConflict     = "txn_conflict"  // a txn id already recorded for other money
)

// Discrepancy is a payment that lost the race or did not match its order.
type Discrepancy struct {
	ID          int64
	OrderNo     string
	TxnID       string
	Kind        string
	AmountCents int64
	CreatedAt   time.Time
	Status      string // open | resolved
	ResolvedAt  time.Time
	ResolvedBy  string
	Note        string
}

// TimeoutMsg is the body of one delayed timeout message. Hop counts the
// messages sent for this order (1 = sent at placement).
type TimeoutMsg struct {
	OrderNo string    `json:"order_no"`
	Hop     int       `json:"hop"`
	DueAt   time.Time `json:"due_at"`
	SentAt  time.Time `json:"sent_at,omitzero"` // tells a broker that ignored the delay (chain.go)
	TraceID string    `json:"trace_id,omitempty"`
}
