package core

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"
)

// Clock is the engine's only source of time, so tests can move it.
type Clock interface{ Now() time.Time }

// SystemClock is the wall clock in UTC.
type SystemClock struct{}

func (SystemClock) Now() time.Time { return time.Now().UTC() }

// Store is the system of record (MySQL/MariaDB or SQLite). Reads that need no
// transaction live here; every multi-row write goes through InTx, so the
// transaction boundary is always visible in the engine's code.
type Store interface {
	// InTx runs fn in one transaction: committed if fn returns nil, rolled
	// back otherwise. Steps that must run after commit run after InTx returns.
	InTx(ctx context.Context, fn func(Tx) error) error
	ShowStore        // setting shows up: core/shows.go
	BestRulesStore   // best-available rules after creation: core/bestrules.go
	ShowEditStore    // name, venue and times after creation: core/showedit.go
	ShowPublishStore // a draft put on sale: core/showpublish.go
	SeatTicketStore  // each seat's own ticket code: core/seattickets.go
	WaitlistStore    // the waiting list: core/waitlist.go

	Show(ctx context.Context, id int64) (Show, error) // ErrShowNotFound
	Shows(ctx context.Context) ([]Show, error)
	Seats(ctx context.Context, showID int64) ([]Seat, error)        // the seat plan, ordered by row, col
	Order(ctx context.Context, orderNo string) (Order, error)       // ErrOrderNotFound; with SeatIDs
	OrderNoByCode(ctx context.Context, code string) (string, error) // a normalized code; ErrOrderNotFound
	Events(ctx context.Context, orderNo string) ([]Event, error)    // oldest first
	AddEvent(ctx context.Context, ev Event) error                   // outside any transaction
	AddEvents(ctx context.Context, evs []Event) error               // many at once, outside any transaction
	// ClaimTimeoutHop moves order_info.timeout_hop from→to and records the
	// new message's send (due time, not yet sent) only while the order is
	// pending and still at from: a duplicate delivery of an old hop then
	// cannot start a second chain, and a crash before the send is seen.
	ClaimTimeoutHop(ctx context.Context, orderNo string, from, to int, send HopSend) (bool, error)
	// ClaimTimeoutResend takes over the unsent send of hop, only while the
	// order is pending at hop, the send is not confirmed and its
	// resend_at is not after now: one of several resenders wins.
	ClaimTimeoutResend(ctx context.Context, orderNo string, hop int, now time.Time, send HopSend) (bool, error)
	// ClaimTimeoutHops is ClaimTimeoutHop for many orders in one
	// transaction: won[i] says whether claims[i] matched.
	ClaimTimeoutHops(ctx context.Context, claims []HopClaim) (won []bool, err error)
	// MarkTimeoutsSent confirms the claimed sends of hops, in one statement.
	MarkTimeoutsSent(ctx context.Context, hops []HopRef) error
	// ReleaseTimeoutSend gives up the claimed send of hop after a failed
	// send: anyone may send it from now on.
	ReleaseTimeoutSend(ctx context.Context, orderNo string, hop int, now time.Time) error
	// TakenSeats is the DB's view of a show's seats: every order_seat row with
	// its order's status (pending → locked, paid → sold).
	TakenSeats(ctx context.Context, showID int64) ([]SeatHold, error)
	// PendingHoldsFrom counts the pending orders placed from the end-user
	// address clientIP on the show (abuse.go).
	PendingHoldsFrom(ctx context.Context, showID int64, clientIP string) (int, error)
	Ping(ctx context.Context) error
}

// Tx is the set of writes the engine makes inside one transaction.
type Tx interface {
	// CheckShowSale reads the show row with a shared lock until the
	// transaction ends, so a plan change or a show cancel (which lock it
	// exclusively) runs wholly before or after this order: ErrShowCancelled,
	// ErrSalesEnded at or after Show.SalesEndAt, ErrPlanChanged when the plan is
	// no longer at planVersion.
	CheckShowSale(ctx context.Context, showID, planVersion int64, now time.Time) error
	// InsertOrder fails with ErrCodeTaken when another order has o.Code.
	InsertOrder(ctx context.Context, o Order) error
	// InsertOrderSeats fails with ErrSeatUnavailable when UNIQUE(show_id, seat_id)
	// rejects a row: the DB, not Redis, is the final word on who owns a seat.
	InsertOrderSeats(ctx context.Context, o Order) error
	// InsertOrders and InsertSeatsOfOrders are InsertOrder and
	// InsertOrderSeats for many orders in multi-row statements (group
	// commit). They fail whole, with ErrCodeTaken or ErrSeatUnavailable
	// naming no order: the engine then writes those orders one by one.
	InsertOrders(ctx context.Context, os []Order) error
	InsertSeatsOfOrders(ctx context.Context, os []Order) error
	// OrderForUpdate reads an order and locks its row until the transaction ends.
	OrderForUpdate(ctx context.Context, orderNo string) (Order, error)
	// TransitionPending is the conditional update every ending goes through:
	// UPDATE order_info SET status=to ... WHERE order_no=? AND status=0.
	// It reports whether this caller won.
	TransitionPending(ctx context.Context, orderNo string, to OrderStatus, t Transition) (bool, error)
	// ExtendHold moves a pending order's expire_at from → to:
	// UPDATE order_info SET expire_at=to WHERE order_no=? AND status=0 AND expire_at=from.
	// It reports whether the order was still pending at from.
	ExtendHold(ctx context.Context, orderNo string, from, to time.Time) (bool, error)
	// DeleteOrderSeats deletes the order's order_seat rows and returns their seat ids.
	DeleteOrderSeats(ctx context.Context, orderNo string) ([]string, error)
	// InsertPayment records a payment with what it did (p.Result: paid,
	// discrepancy, ...); false when txn_id was seen before.
	InsertPayment(ctx context.Context, p Payment) (bool, error)
	// PaymentByTxn reads the payment recorded under txnID.
	PaymentByTxn(ctx context.Context, txnID string) (Payment, error)
	// OrdersForUpdate, TransitionPendings, DeleteSeatsOfOrders,
	// PaymentsByTxns and InsertPayments are OrderForUpdate,
	// TransitionPending, DeleteOrderSeats, PaymentByTxn and InsertPayment
	// for many orders at once (cancelbatch.go, paybatch.go).
	// OrdersForUpdate locks in order-number order and leaves out orders
	// that do not exist; TransitionPendings (order_no → its transition)
	// returns how many it moved; InsertPayments fails whole on a txn id
	// recorded before.
	OrdersForUpdate(ctx context.Context, orderNos []string) (map[string]Order, error)
	TransitionPendings(ctx context.Context, to OrderStatus, ts map[string]Transition) (int, error)
	DeleteSeatsOfOrders(ctx context.Context, orderNos []string) (map[string][]string, error)
	PaymentsByTxns(ctx context.Context, txnIDs []string) (map[string]Payment, error)
	InsertPayments(ctx context.Context, ps []Payment) error
	InsertDiscrepancy(ctx context.Context, d Discrepancy) error
	AddEvent(ctx context.Context, ev Event) error
	AddEvents(ctx context.Context, evs []Event) error
	// AddAudit appends a staff action's audit row in the transaction of the
	// change it records (StaffAction).
	AddAudit(ctx context.Context, a AuditEntry) error
	ShiftTx
	WaitlistTx // the waiting list's hand-off: handoff.go
	WebhookTx  // events for the storefront, sent once the transaction commits: core/webhook.go
}

// Transition carries what a winning conditional update writes besides status.
type Transition struct {
	At     time.Time
	Reason string // cancel reason
	Actor  string
	TxnID  string // payment that paid the order
}

// SeatStore is the fast, derived seat view (Redis). It is never the truth:
// everything it holds can be rebuilt from the Store.
type SeatStore interface {
	// Lock atomically locks every seat for orderNo, or none: it fails with
	// SeatsUnavailable(seats) or ErrPurchaseLimit (user's locked+sold seats in
	// the show would exceed limit).
	Lock(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string, limit int, now time.Time) error
	// LockBlocked is Lock for box-office sales and for locking again what
	// the DB already gave: a blocked seat counts as available. The block
	// stays, so the seat is blocked again once the order lets it go.
	LockBlocked(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string, limit int, now time.Time) error
	// ChooseAndLock chooses req.Count seats by the best-available rules
	// (bestseats.go) from the show's live state and locks them as Lock does,
	// in one atomic step: ErrNotEnoughSeats (its Left saying what remains)
	// when no set fits, ErrPurchaseLimit as for Lock.
	ChooseAndLock(ctx context.Context, showID, userID int64, orderNo string, idx *SeatIndex, req BestRequest, limit int, now time.Time) (BestChoice, error)
	// Block marks the seats blocked, or none of them: SeatsUnavailable
	// naming the seats that are locked or sold. It returns the seats that
	// were not blocked before. now is kept with each block, so reconcile
	// can tell a block in flight from a stale one.
	Block(ctx context.Context, showID int64, seatIDs []string, reason string, now time.Time) ([]string, error)
	// Unblock removes blocks; seats not blocked are left alone.
	Unblock(ctx context.Context, showID int64, seatIDs []string) error
	// Blocks returns the show's blocked seats: seat id → reason.
	Blocks(ctx context.Context, showID int64) (map[string]string, error)
	// ReplaceBlocks makes the show's blocks exactly blocks (rebuild).
	ReplaceBlocks(ctx context.Context, showID int64, blocks []SeatBlock) error
	// Release frees the seats still locked by orderNo and gives the user's
	// limit back for them; seats in other states or held by others are left
	// alone, so releasing twice is harmless. Returns how many were freed.
	Release(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string) (int, error)
	// ReleaseOrder is Release of every seat orderNo holds locked, for when
	// the caller does not know which (a lost ChooseAndLock reply). It reads
	// the whole show: the rare path only.
	ReleaseOrder(ctx context.Context, showID int64, orderNo string) (int, error)
	// MarkSold sets the seats sold to orderNo: the DB already says they are.
	MarkSold(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string) error
	// ReleaseSold frees the seats still sold to orderNo (a refund) and gives
	// the holder's limit back for them; seats in other states or held by
	// others are left alone, so releasing twice is harmless. Returns how many.
	ReleaseSold(ctx context.Context, showID int64, orderNo string, seatIDs []string) (int, error)
	// Transfer hands seats from the order that let them go (from; "" for
	// nobody) to a waiting-list offer's order in one atomic step: each seat
	// held by from, in any state, or by nobody becomes locked by to for
	// toUser at now, the counters moving with it; a seat held by another
	// order is left alone. Returns how many it moved (handoff.go).
	Transfer(ctx context.Context, showID int64, from, to string, toUser int64, seatIDs []string, now time.Time) (int, error)
	// Holds returns every non-available seat of the show.
	Holds(ctx context.Context, showID int64) ([]SeatHold, error)
	// Replace makes the show's seat state exactly holds (and the purchase
	// counters what holds imply); used to rebuild from the DB.
	Replace(ctx context.Context, showID int64, holds []SeatHold) error
	Ping(ctx context.Context) error
}

// TimeoutHandler consumes the timeouts of one delivered message (or of
// several delivered together), one order each. It returns an error per
// timeout, nil when that one is done; an error means "deliver that one
// again later", and never holds the others back.
type TimeoutHandler func(ctx context.Context, msgs []TimeoutMsg) []error

// PerTimeout is a TimeoutHandler that runs h on each timeout in turn.
func PerTimeout(h func(ctx context.Context, msg TimeoutMsg) error) TimeoutHandler {
	return func(ctx context.Context, msgs []TimeoutMsg) []error {
		errs := make([]error, len(msgs))
		for i, m := range msgs {
			errs[i] = h(ctx, m)
		}
		return errs
	}
}

// Call runs h as a queue's consumer must: a panic, or a result that does
// not answer each timeout, becomes an error for every timeout, so the
// message is retried with backoff (and dead-lettered in the end) instead of
// crashing every instance that receives it or stalling its queue.
func (h TimeoutHandler) Call(ctx context.Context, msgs []TimeoutMsg) (errs []error) {
	defer func() {
		if r := recover(); r != nil {
			errs = FailAll(len(msgs), fmt.Errorf("timeout handler panic: %v\n%s", r, debug.Stack()))
		}
	}()
	if errs = h(ctx, msgs); len(errs) != len(msgs) {
		return FailAll(len(msgs), fmt.Errorf("timeout handler returned %d results for %d timeouts", len(errs), len(msgs)))
	}
	return errs
}

// FailAll is err for each of n timeouts: a handler call that failed as a
// whole (a panic, a broken result), as a queue's consumer reports it.
func FailAll(n int, err error) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}

// DelayQueue delivers timeout messages later, at least once.
type DelayQueue interface {
	// Send schedules the timeouts of msgs (one or more orders) as one
	// message. With level > 0 the queue delivers after the broker's delay
	// level; with level == 0 after exactly delay.
	Send(ctx context.Context, msgs []TimeoutMsg, level int, delay time.Duration) error
	// Consume starts delivering due messages to h until Close.
	Consume(ctx context.Context, h TimeoutHandler) error
	Ping(ctx context.Context) error
	Close() error
}

// TxQueue is a DelayQueue that keeps its messages in the store's own
// database (the DB queue). The engine writes a new order's first timeout
// message in the order's own transaction, so the order and its message
// commit together (a transactional outbox): no crash or failed send can
// leave a hold without its timeout, and the placement saves a write.
type TxQueue interface {
	DelayQueue
	// SendTx writes msgs in tx, which must be a transaction of the store on
	// the queue's database. Once tx has committed, the caller runs wake so
	// the consumer looks for them on time.
	SendTx(ctx context.Context, tx Tx, msgs []QueuedMsg) (wake func(), err error)
}

// QueuedMsg is one Send of a batch: msg after level, or after delay when
// level is 0.
type QueuedMsg struct {
	Msg   TimeoutMsg
	Level int
	Delay time.Duration
}

// Notifier hears about seat changes after they happen (the live seat map).
type Notifier interface {
	SeatsChanged(showID int64, seatIDs []string, state SeatState, orderNo string)
}
