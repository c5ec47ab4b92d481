// Package till runs shifts at the box-office till: a clerk opens a shift
// with a float, every counter payment and every refund of a counter sale
// the clerk runs carries the shift's id (written by the engine in the
// money's own transaction, core/shifts.go), and closing compares the
// counted cash with float + cash sales − cash refunds, summed over those
// rows. A difference over the tolerance opens a discrepancy case
// (kind till_difference) for a manager, who works it like any other:
// written off by two people, or settled.
package till

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"seatflow/core"
)

// Shift is one clerk's shift at the till; amounts are in Currency's minor unit.
type Shift struct {
	ID              int64
	Clerk           string // staff username
	Currency        string
	FloatCents      int64
	OpenedAt        time.Time
	ClosedAt        time.Time // zero while open
	CountedCents    int64     // the cash counted at closing
	ExpectedCents   int64     // float + cash sales − cash refunds, at closing
	DifferenceCents int64     // counted − expected: negative is a shortfall
	CaseID          int64     // the till_difference case, 0 when none
}

// Open reports whether the shift is still open.
func (s Shift) Open() bool { return s.ClosedAt.IsZero() }

// Flow is the money of one tender in a shift.
type Flow struct {
	Sales        int   // counter payments
	SalesCents   int64 //
	Refunds      int   // refunds done
	RefundsCents int64
}

// Net is what the tender brought in.
func (f Flow) Net() int64 { return f.SalesCents - f.RefundsCents }

// Totals is a shift's money by tender.
type Totals struct{ Cash, Card Flow }

// Add counts n rows of the ledger, of cents in all.
func (t *Totals) Add(tender core.Tender, refund bool, n int, cents int64) {
	f := &t.Card
	if tender == core.TenderCash {
		f = &t.Cash
	}
	if refund {
		f.Refunds += n
		f.RefundsCents += cents
	} else {
		f.Sales += n
		f.SalesCents += cents
	}
}

// Expected is the cash the till should hold: the float and the cash that
// came in less the cash that went out. Card money never enters the drawer.
func (s Shift) Expected(t Totals) int64 { return s.FloatCents + t.Cash.Net() }

// DiscrepancyTillDifference is the case kind of a count that missed by
// more than the tolerance; its txn id names the shift.
const DiscrepancyTillDifference = "till_difference"

// CaseTxnID is the txn id of shift id's case: one case per shift.
func CaseTxnID(id int64) string { return "till-shift-" + strconv.FormatInt(id, 10) }

// Audit actions.
const (
	AuditShiftOpen  = "till_shift_open"
	AuditShiftClose = "till_shift_close"
)

// MaxFloatCents bounds a float and a count: a till, not a vault.
const MaxFloatCents int64 = 1_000_000_000

// Errors.
var (
	ErrShiftOpen     = &core.Error{Kind: core.KindConflict, Code: "shift_open", Message: "the clerk already has an open shift: close it first"}
	ErrShiftNotFound = &core.Error{Kind: core.KindNotFound, Code: "shift_not_found", Message: "till shift not found"}
)

// Tx is what a shift's opening and closing write in one transaction.
type Tx interface {
	// InsertShift fails with ErrShiftOpen when the clerk has an open shift.
	InsertShift(ctx context.Context, s Shift) (int64, error)
	// OpenShiftForUpdate returns clerk's open shift, locked exclusively:
	// money being attached to it (which share-locks it) has committed.
	OpenShiftForUpdate(ctx context.Context, clerk string) (Shift, bool, error)
	// LedgerTotals sums the payment and refund rows of a shift.
	LedgerTotals(ctx context.Context, shiftID int64) (Totals, error)
	CloseShift(ctx context.Context, s Shift) error
	InsertDiscrepancy(ctx context.Context, d core.Discrepancy) error
	// DiscrepancyID returns the id of the case of (txnID, kind).
	DiscrepancyID(ctx context.Context, txnID, kind string) (int64, error)
	AddAudit(ctx context.Context, a core.AuditEntry) error
}

// Store is the till's system of record.
type Store interface {
	InTillTx(ctx context.Context, fn func(Tx) error) error
	Shift(ctx context.Context, id int64) (Shift, error) // ErrShiftNotFound
	CurrentShift(ctx context.Context, clerk string) (Shift, bool, error)
	// Shifts lists the shifts opened in [from, to), of clerk when not
	// empty, oldest first.
	Shifts(ctx context.Context, from, to time.Time, clerk string) ([]Shift, error)
	// ShiftTotals sums the ledger of each shift.
	ShiftTotals(ctx context.Context, ids []int64) (map[int64]Totals, error)
}

// Till runs shifts. Tolerance is the difference (either way) a closing may
// show without a case.
type Till struct {
	store     Store
	clock     core.Clock
	tolerance int64
	metrics   *Metrics
}

// New returns the till over s.
func New(s Store, clock core.Clock, toleranceCents int64, m *Metrics) (*Till, error) {
	if toleranceCents < 0 {
		return nil, fmt.Errorf("till: tolerance %d cents may not be negative", toleranceCents)
	}
	return &Till{store: s, clock: clock, tolerance: toleranceCents, metrics: m}, nil
}

// Tolerance is the difference allowed without a case, in minor units.
func (t *Till) Tolerance() int64 { return t.tolerance }

// Store returns the shifts' store, for read-only views.
func (t *Till) Store() Store { return t.store }

// OpenRequest opens a shift.
type OpenRequest struct {
	Clerk      string
	Currency   string
	FloatCents int64
	Audit      *core.StaffAction
}

// Open opens clerk's shift with a float.
func (t *Till) Open(ctx context.Context, r OpenRequest) (Shift, error) {
	switch {
	case r.Clerk == "":
		return Shift{}, core.Invalidf("a shift needs its clerk")
	case !core.ValidCurrency(r.Currency):
		return Shift{}, core.Invalidf("currency %q is not an ISO 4217 currency code", r.Currency)
	case r.FloatCents < 0 || r.FloatCents > MaxFloatCents:
		return Shift{}, core.Invalidf("the float must be between 0 and %d", MaxFloatCents)
	}
	s := Shift{Clerk: r.Clerk, Currency: r.Currency, FloatCents: r.FloatCents, OpenedAt: t.clock.Now()}
	err := t.store.InTillTx(ctx, func(tx Tx) error {
		var err error
		if s.ID, err = tx.InsertShift(ctx, s); err != nil {
			return err
		}
		return audit(ctx, tx, r.Audit, s.OpenedAt, AuditShiftOpen, s, map[string]any{
			"float_cents": s.FloatCents, "currency": s.Currency})
	})
	if err != nil {
		return Shift{}, fmt.Errorf("open shift of %s: %w", r.Clerk, err)
	}
	t.metrics.opened()
	return s, nil
}

// CloseRequest closes clerk's open shift with the cash counted.
type CloseRequest struct {
	Clerk        string
	CountedCents int64
	Audit        *core.StaffAction
}

// Close closes clerk's open shift: the expected cash is summed from the
// ledger under the shift's exclusive lock, so no payment can slip in
// between the sum and the close; a difference over the tolerance opens a
// till_difference case in the same transaction.
func (t *Till) Close(ctx context.Context, r CloseRequest) (Shift, Totals, error) {
	if r.CountedCents < 0 || r.CountedCents > MaxFloatCents {
		return Shift{}, Totals{}, core.Invalidf("the counted cash must be between 0 and %d", MaxFloatCents)
	}
	now := t.clock.Now()
	var (
		s   Shift
		tot Totals
	)
	err := t.store.InTillTx(ctx, func(tx Tx) error {
		var ok bool
		var err error
		if s, ok, err = tx.OpenShiftForUpdate(ctx, r.Clerk); err != nil {
			return err
		} else if !ok {
			return core.ErrNoOpenShift
		}
		if tot, err = tx.LedgerTotals(ctx, s.ID); err != nil {
			return err
		}
		s.ClosedAt, s.CountedCents, s.ExpectedCents = now, r.CountedCents, s.Expected(tot)
		s.DifferenceCents, s.CaseID = s.CountedCents-s.ExpectedCents, 0
		if abs(s.DifferenceCents) > t.tolerance {
			if s.CaseID, err = openCase(ctx, tx, s); err != nil {
				return err
			}
		}
		if err := tx.CloseShift(ctx, s); err != nil {
			return err
		}
		return audit(ctx, tx, r.Audit, now, AuditShiftClose, s, map[string]any{"currency": s.Currency,
			"counted_cents": s.CountedCents, "expected_cents": s.ExpectedCents, "difference_cents": s.DifferenceCents,
			"case_id": s.CaseID})
	})
	if err != nil {
		return Shift{}, Totals{}, fmt.Errorf("close shift of %s: %w", r.Clerk, err)
	}
	t.metrics.closed(s.CaseID != 0)
	return s, tot, nil
}

// openCase records shift s's difference as a case for a manager.
func openCase(ctx context.Context, tx Tx, s Shift) (int64, error) {
	what := "over"
	if s.DifferenceCents < 0 {
		what = "short"
	}
	txn := CaseTxnID(s.ID)
	if err := tx.InsertDiscrepancy(ctx, core.Discrepancy{TxnID: txn, Kind: DiscrepancyTillDifference,
		AmountCents: abs(s.DifferenceCents), CreatedAt: s.ClosedAt, Status: core.DiscrepancyOpen,
		Note: fmt.Sprintf("till shift %d of %s: counted %d, expected %d %s (minor units): %s by %d", s.ID, s.Clerk,
			s.CountedCents, s.ExpectedCents, s.Currency, what, abs(s.DifferenceCents))}); err != nil {
		return 0, err
	}
	return tx.DiscrepancyID(ctx, txn, DiscrepancyTillDifference)
}

func audit(ctx context.Context, tx Tx, by *core.StaffAction, at time.Time, action string, s Shift, detail map[string]any) error {
	if by == nil {
		return nil
	}
	detail["clerk"] = s.Clerk
	return tx.AddAudit(ctx, by.Entry(at, action, "till_shift:"+strconv.FormatInt(s.ID, 10), detail))
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// Current returns clerk's open shift with its money so far.
func (t *Till) Current(ctx context.Context, clerk string) (Shift, Totals, bool, error) {
	s, ok, err := t.store.CurrentShift(ctx, clerk)
	if err != nil || !ok {
		return Shift{}, Totals{}, false, err
	}
	tots, err := t.store.ShiftTotals(ctx, []int64{s.ID})
	if err != nil {
		return Shift{}, Totals{}, false, err
	}
	return s, tots[s.ID], true, nil
}

// Report is one shift with its money.
type Report struct {
	Shift
	Totals
}

// Day lists the shifts opened on day (a date in loc), of clerk when not
// empty, with their money: the shift report and the manager's day view.
func (t *Till) Day(ctx context.Context, day time.Time, loc *time.Location, clerk string) ([]Report, error) {
	y, m, d := day.Date()
	from := time.Date(y, m, d, 0, 0, 0, 0, loc)
	shifts, err := t.store.Shifts(ctx, from, from.AddDate(0, 0, 1), clerk)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(shifts))
	for i, s := range shifts {
		ids[i] = s.ID
	}
	tots, err := t.store.ShiftTotals(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Report, len(shifts))
	for i, s := range shifts {
		out[i] = Report{Shift: s, Totals: tots[s.ID]}
	}
	return out, nil
}
