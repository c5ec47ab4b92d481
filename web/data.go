package web

import (
	"net/url"
	"strconv"
	"time"

	"seatflow/core"
)

// DashboardData is the dashboard's numbers.
type DashboardData struct {
	Counts            map[string]int // pending now; placed, paid, cancelled, expired in the last hour
	OpenDiscrepancies int
	MoreDiscrepancies bool // OpenDiscrepancies is a lower bound
	Reconcile         bool // whether a reconcile runner is wired in
	LastRun           *ReconcileRun
}

// HoldsQuery is the pending-holds search form, as it appears in the URL.
type HoldsQuery struct {
	Search string // part of an order number
	ShowID int64
	UserID int64
	Sort   string // expire | created
	Page   int    // from 1
}

// Values is q as URL query parameters, with page replaced.
func (q HoldsQuery) Values(page int) string {
	v := url.Values{}
	if q.Search != "" {
		v.Set("q", q.Search)
	}
	if q.ShowID != 0 {
		v.Set("show", strconv.FormatInt(q.ShowID, 10))
	}
	if q.UserID != 0 {
		v.Set("user", strconv.FormatInt(q.UserID, 10))
	}
	if q.Sort != "" && q.Sort != "expire" {
		v.Set("sort", q.Sort)
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// HoldsData is one page of pending holds.
type HoldsData struct {
	Query    HoldsQuery
	Orders   []core.Order
	Total    int
	PageSize int
	Shows    []core.Show
}

// Pages is the number of pages Total fills.
func (d HoldsData) Pages() int {
	if d.PageSize <= 0 || d.Total == 0 {
		return 1
	}
	return (d.Total + d.PageSize - 1) / d.PageSize
}

// ShowName names a show by id, or shows the id when it is unknown.
func ShowName(shows []core.Show, id int64) string {
	for _, s := range shows {
		if s.ID == id {
			return s.Name
		}
	}
	return "#" + strconv.FormatInt(id, 10)
}

// Cancel outcomes shown on the order page after a force-cancel.
const (
	OutcomeCancelled        = "cancelled"
	OutcomeAlreadyPaid      = "already_paid"
	OutcomeAlreadyCancelled = "already_cancelled"
)

// OrderData is an order, its timeline and the force-cancel form's state.
type OrderData struct {
	Order   core.Order
	Show    core.Show
	Events  []core.Event
	Outcome string // one of the Outcome constants after a force-cancel, or ""
	// Confirming is set when the form was sent once: the page then asks to
	// confirm the cancel of these seats for Reason.
	Confirming bool
	Reason     string
	// ReasonMissing is set when the form was sent without a reason.
	ReasonMissing bool
}

// SeatMapData is a show's seat grid.
type SeatMapData struct {
	Show  core.Show
	Seats []core.SeatView // ordered by row, then column
}

// Rows splits the seats into rows of the grid.
func (d SeatMapData) Rows() [][]core.SeatView {
	var rows [][]core.SeatView
	for i, s := range d.Seats {
		if i == 0 || s.Row != d.Seats[i-1].Row {
			rows = append(rows, nil)
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], s)
	}
	return rows
}

// SeatPanelData is the side panel of one seat.
type SeatPanelData struct {
	Show  core.Show
	Seat  core.SeatView
	Order *core.Order // the holder, when the seat is locked or sold
}

// DiscrepanciesData is one page of discrepancies.
type DiscrepanciesData struct {
	Status string // open | resolved | "" (all)
	Items  []core.Discrepancy
	Page   int
	More   bool
}

// ReconcileRun is one reconcile run as the console shows it.
type ReconcileRun struct {
	ID         int64
	Trigger    string // schedule | sweep | manual | cli
	Owner      string // the instance that ran it
	Status     string // running | ok | errors | aborted | abandoned
	StartedAt  time.Time
	FinishedAt time.Time // zero while running
	Checks     []ReconcileCheck
	Error      string
}

// Totals adds up the checks.
func (r ReconcileRun) Totals() (found, fixed, errs int) {
	for _, c := range r.Checks {
		found += c.Found
		fixed += c.Fixed
		errs += c.Errors
	}
	return found, fixed, errs
}

// ReconcileCheck is one check's result within a run.
type ReconcileCheck struct {
	Name   string
	Found  int
	Fixed  int
	Errors int
}

// ReconcileData is the reconcile page.
type ReconcileData struct {
	Available bool // false when this server has no reconcile runner
	Runs      []ReconcileRun
}

// AuditData is one page of the audit log, newest first.
type AuditData struct {
	Entries []core.AuditEntry
	Older   int64 // the id to page from for older entries, 0 when there are none
}

// StaffData is the staff accounts page.
type StaffData struct {
	Accounts []core.Staff
	// The add form, when it was sent and refused.
	Username  string
	Role      core.Role
	FormError string // catalog key
}

// ErrorData is an error page.
type ErrorData struct {
	Status    int
	Text      string // catalog key of a more precise explanation, or ""
	RequestID string
}
