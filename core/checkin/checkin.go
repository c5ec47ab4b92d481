// Package checkin admits tickets at the door. A ticket is a seat of a paid
// order; the printed order ticket's QR code carries the order's short code
// (core/codes.go), which admits all its seats, and each seat's own ticket
// card carries that seat's code (core/seattickets.go), which admits that
// seat only. A ticket admits once: the store's one conditional update
// (order_seat.checked_in_at = 0 → now, while the order is paid) decides, so
// two gates on two instances scanning one ticket at the same instant admit
// it once and the other learns who was first.
package checkin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"seatflow/core"
	"seatflow/core/text"
)

// Results of a scan, the result label of seatflow_checkins_total.
const (
	ResultAdmitted         = "admitted"
	ResultAlreadyCheckedIn = "already_checked_in"
	ResultNotValid         = "not_valid"
)

// Reasons a ticket is not valid.
const (
	ReasonUnknownCode = "unknown_code" // no order has this code or number
	ReasonUnpaid      = "unpaid"       // pending: not paid (yet)
	ReasonCancelled   = "cancelled"
	ReasonRefunded    = "refunded"
	ReasonAnotherShow = "another_show" // the request named a show and the order is for another
	ReasonNotInOrder  = "seat_not_in_order"
)

// AuditUndo is the audit action of an undone scan.
const AuditUndo = "checkin_undo"

// maxGateLen bounds a gate's name (the column is VARCHAR(64)).
const maxGateLen = 64

// Error codes. ErrAlreadyCheckedIn and ErrNotValid come back with Detail
// set (a *Refusal), so the API can name the first scan or the reason.
var (
	ErrAlreadyCheckedIn = &core.Error{Kind: core.KindConflict, Code: ResultAlreadyCheckedIn, Message: "ticket already checked in"}
	ErrNotValid         = &core.Error{Kind: core.KindConflict, Code: ResultNotValid, Message: "ticket is not valid"}
	ErrNotCheckedIn     = &core.Error{Kind: core.KindConflict, Code: "not_checked_in", Message: "no admitted ticket to undo"}
	ErrBadRequest       = &core.Error{Kind: core.KindInvalid, Code: "invalid_request", Message: "give a code or an order_no, and a gate"}
)

// Ticket is one seat of an order and its admission (At zero: not admitted).
type Ticket struct {
	ShowID  int64
	OrderNo string
	SeatID  string
	At      time.Time
	Gate    string
	Actor   string
	Scan    string // the admitting scan's id
}

// Scan is one conditional admission the store runs.
type Scan struct {
	OrderNo string
	SeatIDs []string // the order's seats to admit, sorted
	Gate    string
	Actor   string
	At      time.Time
	ID      string // random; the rows this scan admitted carry it
}

// Store is what check-in needs of the system of record.
type Store interface {
	OrderNoByCode(ctx context.Context, code string) (string, error)
	// TicketByCode is the seat (order_seat row) whose own ticket code this
	// is (normalized); core.ErrOrderNotFound when no row has it.
	TicketByCode(ctx context.Context, code string) (Ticket, error)
	Order(ctx context.Context, orderNo string) (core.Order, error)
	// AdmitTickets is the one conditional update: it sets the admission of
	// those of s.SeatIDs not admitted yet, only while the order is paid,
	// and returns every ticket (order_seat row) of the order afterwards.
	AdmitTickets(ctx context.Context, s Scan) ([]Ticket, error)
	// UndoTickets clears the admission of the order's admitted seats among
	// seatIDs (all when empty) and, in the same transaction, writes the
	// audit row entry returns for the tickets it cleared; none cleared is
	// no audit row and no error.
	UndoTickets(ctx context.Context, orderNo string, seatIDs []string,
		entry func([]Ticket) core.AuditEntry) ([]Ticket, error)
	// Counts and Arrivals read a show's admissions (counts.go); Arrivals
	// per gate and slot of time, slots starting at multiples of slot.
	Counts(ctx context.Context, showID int64) (Counts, error)
	Arrivals(ctx context.Context, showID int64, slot time.Duration) ([]Arrival, error)
	// TicketRows reads the seats of a show's paid and refunded orders for
	// its offline list, by order number and seat; OpenCase inserts a case
	// (a repeat of its txn id and kind changes nothing) and returns its id.
	TicketRows(ctx context.Context, showID int64) ([]ListRow, error)
	OpenCase(ctx context.Context, d core.Discrepancy) (int64, error)
}

// Request is one scan at a gate.
type Request struct {
	Code    string   // the QR's code (the order's, or one seat's), or
	OrderNo string   // the order number
	Gate    string   // where the scan happened
	ShowID  int64    // when not 0, the show this gate admits to
	SeatIDs []string // part of the order; empty: all its seats (a seat code's one seat)
	Actor   string   // who scanned: staff:<name> or api:<prefix>
	// ScanID, when set (16 hex digits), names the scan: a gate that got no
	// answer and decided the scan offline sends it again under this id
	// (Sync), which then finds its own admission, not a double entry.
	ScanID string
}

// Admission is an admitted scan.
type Admission struct {
	Order core.Order
	// Seats are the seats this scan admitted; AdmittedCount is how many
	// of the order's seats are admitted now, this scan's included.
	Seats         []string
	AdmittedCount int
	At            time.Time
}

// Refusal is the Detail of ErrAlreadyCheckedIn and ErrNotValid.
type Refusal struct {
	Reason  string   `json:"reason,omitempty"` // not_valid's
	OrderNo string   `json:"order_no,omitempty"`
	ShowID  int64    `json:"show_id,omitempty"`
	Seats   []string `json:"seats,omitempty"`
	// First is the earliest admission of the asked seats (already_checked_in).
	First *Entry `json:"first,omitempty"`
}

// Entry is when, at which gate and by whom a ticket was admitted.
type Entry struct {
	SeatID string    `json:"seat_id"`
	At     time.Time `json:"at"`
	Gate   string    `json:"gate"`
	By     string    `json:"by"`
}

// Desk admits and undoes scans.
type Desk struct {
	store   Store
	clock   core.Clock
	results *prometheus.CounterVec
}

// New returns a desk over s; reg (may be nil) gets seatflow_checkins_total,
// every result at 0.
func New(s Store, clock core.Clock, reg prometheus.Registerer) *Desk {
	results := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "seatflow_checkins_total",
		Help: "Ticket scans at the door, by result: admitted, already_checked_in, not_valid, and double_entry (an offline gate's)."}, []string{"result"})
	for _, r := range []string{ResultAdmitted, ResultAlreadyCheckedIn, ResultNotValid, ResultDoubleEntry} {
		results.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(results)
	}
	return &Desk{store: s, clock: clock, results: results}
}

// Admit decides one scan: an Admission, or ErrAlreadyCheckedIn or
// ErrNotValid carrying a *Refusal, or another error (bad request, store).
func (d *Desk) Admit(ctx context.Context, r Request) (Admission, error) {
	a, err := d.admit(ctx, r)
	switch {
	case err == nil:
		d.results.WithLabelValues(ResultAdmitted).Inc()
	case errors.Is(err, ErrAlreadyCheckedIn):
		d.results.WithLabelValues(ResultAlreadyCheckedIn).Inc()
	case errors.Is(err, ErrNotValid):
		d.results.WithLabelValues(ResultNotValid).Inc()
	}
	return a, err
}

func (d *Desk) admit(ctx context.Context, r Request) (Admission, error) {
	gate, err := checkGate(r.Gate)
	if err != nil {
		return Admission{}, err
	}
	if r.ScanID != "" && !isScanID(r.ScanID) {
		return Admission{}, &core.Error{Kind: core.KindInvalid, Code: "invalid_request", Field: "scan_id",
			Message: "scan_id: want 16 lowercase hex digits"}
	}
	o, seats, err := d.ticket(ctx, r.Code, r.OrderNo, r.SeatIDs, r.ShowID)
	if err != nil {
		return Admission{}, err
	}
	scan := Scan{OrderNo: o.OrderNo, SeatIDs: seats, Gate: gate, Actor: r.Actor, At: d.clock.Now().UTC(), ID: r.ScanID}
	if scan.ID == "" {
		scan.ID = newScanID()
	}
	a, first, err := d.apply(ctx, o, scan, r.ShowID)
	if err != nil || len(a.Seats) > 0 {
		return a, err
	}
	return Admission{}, refuse(ErrAlreadyCheckedIn, Refusal{OrderNo: o.OrderNo, ShowID: o.ShowID, Seats: seats, First: first})
}

// ticket resolves a scan to its order and the seats it asks for, or a
// not_valid refusal (naming the seat of a seat code).
func (d *Desk) ticket(ctx context.Context, code, orderNo string, seatIDs []string, showID int64) (core.Order, []string, error) {
	o, seat, err := d.order(ctx, code, orderNo)
	if err != nil {
		return core.Order{}, nil, err
	}
	seats, err := pick(o, seat, seatIDs)
	if err != nil {
		return core.Order{}, nil, err
	}
	var named []string
	if seat != "" {
		named = seats
	}
	if err := valid(o, showID, named); err != nil {
		return core.Order{}, nil, err
	}
	return o, seats, nil
}

// apply runs scan's conditional update: the Admission lists the seats
// this scan admitted (none when others were first: first is then the
// earliest of them).
func (d *Desk) apply(ctx context.Context, o core.Order, scan Scan, showID int64) (Admission, *Entry, error) {
	tickets, err := d.store.AdmitTickets(ctx, scan)
	if err != nil {
		return Admission{}, nil, err
	}
	a := Admission{Order: o, At: scan.At}
	var first *Entry
	for _, t := range tickets {
		if t.At.IsZero() {
			continue
		}
		a.AdmittedCount++
		switch {
		case t.Scan == scan.ID:
			a.Seats = append(a.Seats, t.SeatID)
		case slices.Contains(scan.SeatIDs, t.SeatID) && (first == nil || t.At.Before(first.At)):
			first = &Entry{SeatID: t.SeatID, At: t.At, Gate: t.Gate, By: t.Actor}
		}
	}
	if len(a.Seats) > 0 || first != nil {
		return a, first, nil
	}
	// Nothing admitted and nobody before: the order stopped being paid
	// between the read and the update (a refund won). Say what it is now.
	now, err := d.store.Order(ctx, o.OrderNo)
	if err != nil {
		return Admission{}, nil, err
	}
	if err := valid(now, showID, nil); err != nil {
		return Admission{}, nil, err
	}
	// Or the seats left the order (a partial refund won).
	if _, err := pick(now, "", scan.SeatIDs); err != nil {
		return Admission{}, nil, err
	}
	return Admission{}, nil, fmt.Errorf("checkin %s: paid, but its seats have no rows", o.OrderNo)
}

// Undo clears the admission of the order's seats (all when seatIDs is
// empty) so they admit again, once; staff is audited with the scans undone.
func (d *Desk) Undo(ctx context.Context, code, orderNo string, seatIDs []string, staff *core.StaffAction) ([]Ticket, error) {
	o, seat, err := d.order(ctx, code, orderNo)
	if errors.Is(err, ErrNotValid) {
		return nil, fmt.Errorf("undo check-in: %w", core.ErrOrderNotFound)
	}
	if err != nil {
		return nil, err
	}
	seats, err := pick(o, seat, seatIDs)
	if err != nil {
		return nil, err
	}
	at := d.clock.Now().UTC()
	undone, err := d.store.UndoTickets(ctx, o.OrderNo, seats, func(ts []Ticket) core.AuditEntry {
		scans := make([]string, len(ts))
		for i, t := range ts {
			scans[i] = fmt.Sprintf("%s %s %s %s", t.SeatID, t.At.Format(time.RFC3339Nano), t.Gate, t.Actor)
		}
		return staff.Entry(at, AuditUndo, "order:"+o.OrderNo, map[string]any{"scans": scans})
	})
	if err != nil {
		return nil, err
	}
	if len(undone) == 0 {
		return nil, ErrNotCheckedIn
	}
	return undone, nil
}

// order resolves a scanned code or a typed order number to its order and,
// for a seat's own code, the one seat the code admits ("" for the order's
// code or number: all its seats). An unknown one is not valid (the door
// must say so, not "not found"); a seat that left its order took its code
// along, so its code is unknown too.
func (d *Desk) order(ctx context.Context, code, orderNo string) (core.Order, string, error) {
	code, orderNo = strings.TrimSpace(code), strings.TrimSpace(orderNo)
	if (code == "") == (orderNo == "") {
		return core.Order{}, "", ErrBadRequest
	}
	unknown := refuse(ErrNotValid, Refusal{Reason: ReasonUnknownCode})
	seat := ""
	if code != "" {
		c, isSeat, ok := core.NormalizeTicketCode(code)
		if !ok {
			return core.Order{}, "", unknown
		}
		var err error
		if isSeat {
			var t Ticket
			t, err = d.store.TicketByCode(ctx, c)
			orderNo, seat = t.OrderNo, t.SeatID
		} else {
			orderNo, err = d.store.OrderNoByCode(ctx, c)
		}
		if errors.Is(err, core.ErrOrderNotFound) {
			return core.Order{}, "", unknown
		}
		if err != nil {
			return core.Order{}, "", err
		}
	}
	o, err := d.store.Order(ctx, core.NormalizeOrderNo(orderNo))
	if errors.Is(err, core.ErrOrderNotFound) {
		return core.Order{}, "", unknown
	}
	return o, seat, err
}

// valid refuses an order that does not admit: not paid, or for another
// show than the one the gate admits to; the refusal names seats, if any.
func valid(o core.Order, showID int64, seats []string) error {
	reason := ""
	if o.Status != core.StatusPaid {
		reason = reasonOf(o.Status)
	}
	if reason == "" && showID != 0 && showID != o.ShowID {
		reason = ReasonAnotherShow
	}
	if reason == "" {
		return nil
	}
	return refuse(ErrNotValid, Refusal{Reason: reason, OrderNo: o.OrderNo, ShowID: o.ShowID, Seats: seats})
}

// pick is the seats of o a scan asks for, sorted: all when asked is empty;
// a seat not of o makes the scan not valid. A seat code's scan (only, not
// "") may ask for its own seat only.
func pick(o core.Order, only string, asked []string) ([]string, error) {
	mine := o.SeatIDs
	if only != "" {
		mine = []string{only}
	}
	if len(asked) == 0 {
		return slices.Sorted(slices.Values(mine)), nil
	}
	var out []string
	for _, s := range asked {
		s = strings.TrimSpace(s)
		if !slices.Contains(mine, s) {
			return nil, refuse(ErrNotValid, Refusal{Reason: ReasonNotInOrder, OrderNo: o.OrderNo, ShowID: o.ShowID, Seats: []string{s}})
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out, nil
}

func checkGate(g string) (string, error) {
	g = strings.TrimSpace(g)
	if g == "" || utf8.RuneCountInString(g) > maxGateLen {
		return "", &core.Error{Kind: core.KindInvalid, Code: "bad_gate", Field: "gate",
			Message: fmt.Sprintf("gate: give a name of 1 to %d characters", maxGateLen)}
	}
	return text.Check("gate", g, text.OneLine)
}

// refuse is base with the refusal attached.
func refuse(base *core.Error, r Refusal) error {
	e := *base
	e.Detail = &r
	e.Seats = r.Seats
	return &e
}

func newScanID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
