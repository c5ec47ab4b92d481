package web

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"seatflow/core"
	"seatflow/core/access"
)

// DashboardData is the dashboard's numbers. Box office and manager
// (BoxOfficeView) get the holds about to expire and the seats left; ops
// and admin (OpsView) the health of the stack and of expiry. What a role
// does not see is not read.
type DashboardData struct {
	Counts    map[string]int // pending now; placed, paid, cancelled, expired in the last hour
	Reconcile bool           // whether a reconcile runner is wired in

	// Box office.
	Expiring      []core.Order // the soonest of the holds expiring within ExpiringWindow
	ExpiringTotal int
	Shows         []core.ShowSummary // on sale, soonest first

	// Ops.
	Health        []HealthCheck
	ClockOffset   time.Duration // this instance's clock minus the database's, once ClockMeasured
	ClockMeasured bool
	ClockLimit    time.Duration // SEATFLOW_MAX_CLOCK_SKEW; 0: none
	Lag           LagChart      // expiry lag of the last hour
	Overdue       []OverduePoint
	OverdueNow    int
	Discrepancies []DiscrepancyAge // open ones, by age
	DeadLetters   int
	LastRun       *ReconcileRun // the newest run worth reading
	LastSweep     *ReconcileRun // the newest run, when it is an empty sweep

	// Every role: the shows whose waiting room is enabled, by show id.
	Queues []QueueRow
	// Every role: the viewer's own refund requests of late, with outcome.
	MyRequests []RequestOutcome
	// Ops: the write-offs the viewer asked for of late, with outcome.
	MyWriteOffs []WriteOffOutcome
}

// OverduePoint is the most orders pending past their expiry at once in
// the minute from At.
type OverduePoint struct {
	At time.Time
	N  int
}

// LagChart is a histogram of expiry lag (cancel time − expire_time):
// Counts[path][i] orders cancelled by path with a lag below Bounds[i]
// (and at or above Bounds[i-1]); the last count is the rest.
type LagChart struct {
	Bounds []time.Duration
	Counts map[string][]int
}

// LagPaths are the expiry paths, in the order the chart stacks them.
func LagPaths() []string { return []string{core.PathTimeout, core.PathSweep, core.PathReconcile} }

// LagBucket is one bar of the chart.
type LagBucket struct {
	Label    string
	Segments []LagSegment // bottom first; paths without orders are left out
	Total    int
}

// LagSegment is one path's part of a bar.
type LagSegment struct {
	Path string
	N    int
}

// Buckets returns the chart's bars.
func (c LagChart) Buckets() []LagBucket {
	out := make([]LagBucket, len(c.Bounds)+1)
	for i := range out {
		switch {
		case i < len(c.Bounds):
			out[i].Label = "<" + boundLabel(c.Bounds[i])
		case len(c.Bounds) > 0:
			out[i].Label = "≥" + boundLabel(c.Bounds[len(c.Bounds)-1])
		}
		for _, path := range LagPaths() {
			if n := c.count(path, i); n > 0 {
				out[i].Segments = append(out[i].Segments, LagSegment{Path: path, N: n})
				out[i].Total += n
			}
		}
	}
	return out
}

// boundLabel writes a bucket bound exactly (1.5s, not Duration's 2s) and
// short (15m, not 15m0s).
func boundLabel(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

func (c LagChart) count(path string, i int) int {
	if counts := c.Counts[path]; i < len(counts) {
		return counts[i]
	}
	return 0
}

// Max is the tallest bar.
func (c LagChart) Max() int {
	m := 0
	for _, b := range c.Buckets() {
		m = max(m, b.Total)
	}
	return m
}

// PathTotal is how many orders path cancelled.
func (c LagChart) PathTotal(path string) int {
	n := 0
	for _, v := range c.Counts[path] {
		n += v
	}
	return n
}

// HoldsQuery is the pending-holds search form, as it appears in the URL.
type HoldsQuery struct {
	Search string // part of an order number
	ShowID int64
	UserID int64
	Sort   string // expire | created
	Due    string // "", DueSoon or DueOverdue
	Page   int    // from 1
}

// The holds list's due filter: expiring within ExpiringWindow, or pending
// past their expiry.
const (
	DueSoon    = "soon"
	DueOverdue = "overdue"
)

// ExpiringWindow is how far ahead "expiring soon" looks (the holds list's
// DueSoon, the box office's dashboard); the texts say 5 minutes.
const ExpiringWindow = 5 * time.Minute

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
	if q.Due != "" {
		v.Set("due", q.Due)
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

// ShowCurrency is the currency of the show with id, or "" when it is unknown.
func ShowCurrency(shows []core.Show, id int64) string {
	for _, s := range shows {
		if s.ID == id {
			return s.Currency
		}
	}
	return ""
}

// Cancel outcomes shown on the order page after a force-cancel.
const (
	OutcomeCancelled        = core.AuditOutcomeCancelled
	OutcomeAlreadyPaid      = core.AuditOutcomeAlreadyPaid
	OutcomeAlreadyCancelled = core.AuditOutcomeAlreadyCancelled
	OutcomeExtended         = core.AuditOutcomeExtended // after an extension
	OutcomeRefunded         = "refunded"
	OutcomeSeatsRefunded    = "seats_refunded"   // a partial refund: the rest stays paid
	OutcomeSeatsExchanged   = "seats_exchanged"  // an exchange: the order holds its new seats
	OutcomeRefundRequested  = "refund_requested" // waits for ops' approval
	OutcomeRefundRejected   = "refund_rejected"
	OutcomeHeld             = "held"      // a counter hold: take the payment next
	OutcomePaid             = "paid"      // paid at the counter: print the ticket
	OutcomePaidLate         = "paid_late" // the hold ended first: the money is a discrepancy
)

// MaxExtendMinutes is the longest one extension may be, in minutes.
const MaxExtendMinutes = 120

// OrderData is an order, its timeline and the force-cancel form's state.
type OrderData struct {
	Order core.Order
	// SeatTickets are a paid order's seats with their own ticket codes.
	SeatTickets []core.SeatTicket
	Show        core.Show
	Events      []core.Event
	Outcome     string // one of the Outcome constants after a force-cancel, or ""
	// Confirming is set when the form was sent once: the page then asks to
	// confirm the cancel of these seats for Reason.
	Confirming bool
	Reason     string
	// ReasonMissing is set when the form was sent without a reason.
	ReasonMissing bool
	// MaxHold is the longest a hold may last in all (the extend form's limit).
	MaxHold time.Duration
	// The extend form, when it was sent and refused: what was entered and
	// the catalog key of why.
	ExtendMinutes int
	ExtendReason  string
	ExtendError   string
	// Refunds are the order's refund rows, oldest first; above
	// RefundApprovalCents (0: never) box office only asks for one.
	Refunds             []core.Refund
	RefundApprovalCents int64
	// The refund form, when it was sent and refused: RefundError is a
	// catalog key, filled in with RefundErrorArgs.
	RefundReason, RefundReference, RefundError string
	RefundErrorArgs                            []any
	// RefundSeats are the seats ticked for a partial refund.
	RefundSeats []string
	// The exchange form (exchange.templ), when it was sent and refused:
	// what was entered and the catalog key of why.
	ExchangeFrom                                  []string
	ExchangeTo, ExchangeTender, ExchangeReference string
	ExchangeReason, ExchangeError                 string
	// Payments are the order's payment rows, oldest first.
	Payments []core.Payment
	// Cases are the discrepancy cases of the order's payments, oldest first.
	Cases []core.DiscrepancyCase
	// The take-payment form (counter sales), when it was sent and refused:
	// what was entered and the reason in words.
	PayTender, PayReference, PayError string
}

// QuickExtendMinutes are the one-click extensions the order page offers.
var QuickExtendMinutes = []int{5, 10, 15}

// ExtendHeadroom is how much longer the hold may still be made.
func (d OrderData) ExtendHeadroom() time.Duration {
	return max(d.MaxHold-d.Order.ExpireAt.Sub(d.Order.CreatedAt), 0)
}

// CanExtendBy reports whether an extension by minutes stays within the limit.
func (d OrderData) CanExtendBy(minutes int) bool {
	return time.Duration(minutes)*time.Minute <= d.ExtendHeadroom()
}

// OpenRefundRequest returns the refund request waiting for approval, if any.
func (d OrderData) OpenRefundRequest() (core.Refund, bool) {
	for _, r := range d.Refunds {
		if r.State == core.RefundRequested {
			return r, true
		}
	}
	return core.Refund{}, false
}

// SeatMapData is a show's seat grid.
type SeatMapData struct {
	Show  core.Show
	Seats []core.SeatView // ordered by row, then column
	// Categories are the show's prices, in the order that gives each its
	// colour (CategoryClass).
	Categories []core.PriceCategory
	// Counter is the counter-sale form, as sent when it was refused.
	Counter CounterForm
	// Version is the seat hub's version of the show read before Seats: the
	// page's stream sends it back, and gets the whole grid only if
	// something changed since.
	Version string
}

// Rows splits the seats into rows of the grid.
func (d SeatMapData) Rows() [][]core.SeatView {
	return splitRows(d.Seats, func(s core.SeatView) int { return s.Row })
}

// splitRows cuts seats, ordered by row, into one slice per row.
func splitRows[S any](seats []S, row func(S) int) [][]S {
	var rows [][]S
	for i, s := range seats {
		if i == 0 || row(s) != row(seats[i-1]) {
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

// CaseFilter is the discrepancy queue's filter, as it appears in the URL.
type CaseFilter struct {
	State   string // CaseStateActive (default), CaseStateAll, or a core.CaseState
	Kind    string // a core.Discrepancy* kind, or "" for any
	Owner   string // a staff username, or "" for anyone
	Unowned bool   // only cases nobody has taken
}

// Queue tabs besides the states themselves.
const (
	CaseStateActive = "active" // every state that is not final: the work to do
	CaseStateAll    = "all"
)

// CaseStateTabs lists the queue's tabs, the work to do first.
func CaseStateTabs() []string {
	tabs := []string{CaseStateActive}
	for _, s := range core.AllCaseStates() {
		tabs = append(tabs, string(s))
	}
	return append(tabs, CaseStateAll)
}

// States is the filter's states; nil for all.
func (f CaseFilter) States() []core.CaseState {
	switch f.State {
	case CaseStateAll:
		return nil
	case CaseStateActive, "":
		var out []core.CaseState
		for _, s := range core.AllCaseStates() {
			if !s.Final() {
				out = append(out, s)
			}
		}
		return out
	}
	return []core.CaseState{core.CaseState(f.State)}
}

// Values is f as URL query parameters for page.
func (f CaseFilter) Values(page int) string {
	v := url.Values{}
	if f.State != "" && f.State != CaseStateActive {
		v.Set("state", f.State)
	}
	if f.Kind != "" {
		v.Set("kind", f.Kind)
	}
	if f.Owner != "" {
		v.Set("owner", f.Owner)
	}
	if f.Unowned {
		v.Set("unowned", "1")
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// DiscrepanciesData is one page of the queue of discrepancy cases.
type DiscrepanciesData struct {
	Filter CaseFilter
	Items  []core.DiscrepancyCase // oldest first
	Counts map[core.CaseState]int // cases per state, for the tabs
	Page   int
	More   bool
}

// TabCount is the number of cases a tab holds.
func (d DiscrepanciesData) TabCount(tab string) int {
	n := 0
	for s, c := range d.Counts {
		if tab == CaseStateAll || tab == string(s) || (tab == CaseStateActive && !s.Final()) {
			n += c
		}
	}
	return n
}

// CaseStateName is the translated name of a case state.
func CaseStateName(p Page, s core.CaseState) string {
	return TranslateOr(p.Lang, "case.state."+string(s), string(s))
}

// CaseData is one discrepancy case and its forms' state.
type CaseData struct {
	Case    core.DiscrepancyCase
	History []core.CaseEvent // oldest first
	// The move form, when it was sent and refused: what was entered and the
	// catalog key of why.
	To, Note  string
	FormError string
}

// ReconcileRun is one reconcile run as the console shows it.
type ReconcileRun struct {
	ID         int64
	Trigger    string // schedule | sweep | manual | cli
	Owner      string // the instance that ran it
	Status     string // running | ok | errors | aborted | abandoned
	StartedAt  time.Time
	FinishedAt time.Time // zero while running
	DryRun     bool      // the checks only reported what they would repair
	Checks     []ReconcileCheck
	Error      string
}

// EmptySweep is a fast sweep that ended well and found nothing: one every
// 30 s, which would bury every run worth reading.
func (r ReconcileRun) EmptySweep() bool {
	found, _, errs := r.Totals()
	return r.Trigger == "sweep" && r.Status == "ok" && !r.DryRun && found == 0 && errs == 0
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

// Repairable counts the listed items of a dry run that a check would
// repair: applying it does nothing to the items a check only reports.
func (r ReconcileRun) Repairable() int {
	n := 0
	for _, c := range r.Checks {
		for _, it := range c.Items {
			if ItemResult(it, r.DryRun) == ResultWould {
				n++
			}
		}
	}
	return n
}

// ReconcileCheck is one check's result within a run.
type ReconcileCheck struct {
	Name   string
	Found  int
	Fixed  int
	Errors int
	Items  []ReconcileItem // what it found (a sample: at most the first 100)
}

// ReconcileItem is one anomaly a check found, and what was — or, in a dry
// run, would be — done about it.
type ReconcileItem struct {
	OrderNo string
	ShowID  int64
	SeatIDs []string
	UserID  int64
	Action  string        // cancel | mark_sold | delete_row | release | relock | set_limit | report | release_sold | block | unblock
	Detail  string        // English
	Notes   []core.Phrase // Detail for Page.Say; none on runs from before they were kept
	Fixed   bool
	Error   string
}

// Key names the anomaly, independently of what was done about it: the same
// anomaly found by a dry run and by the run that applied it has one key.
func (it ReconcileItem) Key() string {
	return it.baseKey() + "|" + strings.Join(it.SeatIDs, ",")
}

// baseKey is Key without the seats: a check may name an item's seats only
// once it has repaired it (expired_pending learns them from the cancel).
func (it ReconcileItem) baseKey() string {
	return fmt.Sprintf("%s|%s|%d|%d", it.Action, it.OrderNo, it.ShowID, it.UserID)
}

// ReconcileRunData is one run's page: its items, check by check. Applied is
// the dry run this run applied, when it is one: the page then shows, item
// by item, what became of each thing the dry run listed.
type ReconcileRunData struct {
	Run     ReconcileRun
	Applied *ReconcileRun
}

// Item results shown on a run's page.
const (
	ResultWould   = "would"   // a dry run would repair it
	ResultReport  = "report"  // listed for people; no check repairs it
	ResultFixed   = "fixed"   // repaired
	ResultFailed  = "failed"  // the repair failed
	ResultSkipped = "skipped" // found but left alone (changed since it was read)
	ResultGone    = "gone"    // listed by the dry run, no longer there when applied
)

// ItemResult classifies an item of a run (a dry run when dryRun).
func ItemResult(it ReconcileItem, dryRun bool) string {
	switch {
	case it.Action == "report":
		return ResultReport
	case dryRun:
		return ResultWould
	case it.Error != "":
		return ResultFailed
	case it.Fixed:
		return ResultFixed
	}
	return ResultSkipped
}

// Result is what the applying run did about the dry run's item.
func (a AppliedItem) Result() string {
	if a.Now == nil {
		return ResultGone
	}
	return ItemResult(*a.Now, false)
}

// AppliedItem is one item of a dry run and what the run that applied it did.
type AppliedItem struct {
	Check string
	Item  ReconcileItem  // as the dry run listed it
	Now   *ReconcileItem // as the applying run found it; nil: no longer there
}

// AppliedItems pairs every item of the applied dry run with its fate in
// this run, and returns the items this run found that the dry run had not
// listed (anomalies that arose in between). An item matches on its Key, or
// on its key without seats when the dry run could not name them.
func (d ReconcileRunData) AppliedItems() (listed []AppliedItem, extra []AppliedItem) {
	if d.Applied == nil {
		return nil, nil
	}
	type ref struct {
		check string
		item  ReconcileItem
	}
	var now []ref
	for _, c := range d.Run.Checks {
		for _, it := range c.Items {
			now = append(now, ref{c.Name, it})
		}
	}
	used := make([]bool, len(now))
	for _, c := range d.Applied.Checks {
		for _, it := range c.Items {
			a := AppliedItem{Check: c.Name, Item: it}
			for i, n := range now {
				if !used[i] && n.check == c.Name && (n.item.Key() == it.Key() ||
					(len(it.SeatIDs) == 0 && n.item.baseKey() == it.baseKey())) {
					used[i], a.Now = true, &n.item
					break
				}
			}
			listed = append(listed, a)
		}
	}
	for i, n := range now {
		if !used[i] {
			extra = append(extra, AppliedItem{Check: n.check, Item: n.item, Now: &n.item})
		}
	}
	return listed, extra
}

// ReconcileData is the reconcile page.
type ReconcileData struct {
	Available bool // false when this server has no reconcile runner
	Runs      []ReconcileRun
	// ShowSweeps lists the sweeps that found nothing too (?sweeps=1);
	// HiddenSweeps is how many of them the list left out.
	ShowSweeps   bool
	HiddenSweeps int
}

// AuditData is one page of the audit log, newest first.
type AuditData struct {
	Entries []core.AuditEntry
	Older   int64 // the id to page from for older entries, 0 when there are none
	Filter  AuditFilter
}

// AuditFilter is what the audit log is narrowed to ("" for any).
type AuditFilter struct {
	Staff, Action, Target string
}

// Query is the filter as URL parameters, for the pager's links.
func (f AuditFilter) Query() url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"staff": f.Staff, "action": f.Action, "target": f.Target} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

// AuditActions are the actions the filter offers: every action the
// catalog names, sorted by their text in the page's language.
func AuditActions(p Page) []string {
	var out []string
	for key := range catalog {
		if a, ok := strings.CutPrefix(key, "audit.action."); ok {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(p.T("audit.action."+a), p.T("audit.action."+b)) })
	return out
}

// AuditTargetURL is the console page of an audit entry's target ("" when
// it has none): order:SF… → its order, show:3 → its seat map, and so on.
func AuditTargetURL(target string) string {
	kind, id, ok := strings.Cut(target, ":")
	if !ok || id == "" {
		return ""
	}
	switch kind {
	case "order":
		return URL("/orders/" + url.PathEscape(id))
	case "show":
		return URL("/shows/" + url.PathEscape(id))
	case "discrepancy":
		return URL("/discrepancies/" + url.PathEscape(id))
	case "reconcile_run":
		return URL("/reconcile/runs/" + url.PathEscape(id))
	case "staff":
		return URL("/audit?" + url.Values{"staff": {id}}.Encode())
	}
	return ""
}

// StaffData is the staff accounts page.
type StaffData struct {
	Accounts []access.Staff
	// The add form, when it was sent and refused.
	Username  string
	Role      access.Role
	FormError string // catalog key
	// A password link just made, shown this once; Added: for an account
	// just added, whose owner sets the first password with it.
	ResetLink, ResetFor string
	Added               bool
	TwoStep             map[int64]bool      // accounts with a confirmed second factor
	TwoStepLocked       map[int64]time.Time // accounts whose second factor is locked, until when
}

// ErrorData is an error page.
type ErrorData struct {
	Status    int
	Text      string // catalog key of a more precise explanation, or ""
	RequestID string
}

// OrdersQuery is the orders page's filters, named in the links as GET
// /api/v1/orders names them.
type OrdersQuery struct {
	Q      string
	ShowID int64
	Status string // comma-separated statuses, "" for all
	Limit  string // orders a page, "" for the default
	Cursor string
	// RefundRequested: only orders with a refund request waiting (refund=requested).
	RefundRequested bool
}

// OrdersData is one page of the order search.
type OrdersData struct {
	Query  OrdersQuery
	Shows  []core.Show
	Orders []core.Order
	Next   string // cursor of the next page, "" on the last
	Error  string // why the filters were refused
}

// Values are the filters as query parameters, with the cursor replaced.
func (q OrdersQuery) Values(cursor string) string {
	v := url.Values{}
	if q.Q != "" {
		v.Set("q", q.Q)
	}
	if q.ShowID != 0 {
		v.Set("show_id", strconv.FormatInt(q.ShowID, 10))
	}
	if q.Status != "" {
		v.Set("status", q.Status)
	}
	if q.Limit != "" {
		v.Set("limit", q.Limit)
	}
	if q.RefundRequested {
		v.Set(ParamRefund, RefundFilterRequested)
	}
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	return v.Encode()
}
