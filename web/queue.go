package web

import (
	"strconv"
	"time"

	"seatflow/core"
	"seatflow/core/admission"
)

// QueueData is a show's waiting-room page: the queue as the seat store
// holds it, this instance's admission controller, the estimate asked for
// and the settings form.
type QueueData struct {
	Show   core.Show
	Status admission.Status
	// Snap is this instance's last step of the show; HasSnap is false
	// until one has stepped it (or the queue is disabled).
	Snap    admission.Snapshot
	HasSnap bool
	// Position is the estimate form's position as typed ("" when none was
	// asked); Estimate the wait there, negative when there is no estimate
	// (paused, or no admission rate).
	Position string
	Estimate time.Duration
	// Error is the catalog key of why a form was refused; Form what the
	// settings form holds (what was typed, after a refusal).
	Error string
	Form  QueueForm
}

// QueueForm is the settings form's fields as text.
type QueueForm struct {
	Enabled bool
	Mode    string // admission.ModeAlways or ModeOverload
	OpensAt string // datetime-local in the staff's zone; "" for none
	Window  string // whole seconds
}

// QueueModes are the modes the settings form offers.
var QueueModes = []admission.Mode{admission.ModeAlways, admission.ModeOverload}

// ID is the show's id as the page's URLs spell it.
func (d QueueData) ID() string { return strconv.FormatInt(d.Show.ID, 10) }

// Waiting is how many have joined and are not admitted.
func (d QueueData) Waiting() int64 { return max(d.Status.Joined-d.Status.Admitted, 0) }

// QueueRow is one active queue on the dashboard's card.
type QueueRow struct {
	Show     int64
	Name     string
	Waiting  int64
	Admitted int64
	Rate     float64 // admissions a second, this instance's controller
	Reason   string  // the controller's Reason
	Paused   bool
	Stepped  bool // the controller has read the signal (Rate and Reason are set)
}

// QueueReason is the controller's reason in the page's language.
func QueueReason(p Page, reason string) string {
	return TranslateOr(p.Lang, "queue.reason."+reason, reason)
}

// Rate is admissions a second, to a tenth.
func (p Page) Rate(perSecond float64) string {
	return p.Tf("queue.per_second", strconv.FormatFloat(perSecond, 'f', 1, 64))
}

// DateTimeLocal is t as a datetime-local input holds it, in the console's
// zone; "" for the zero time.
func (p Page) DateTimeLocal(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.In(p.loc()).Format(DateTimeLocalLayout)
}

// DateTimeLocalLayout is the value format of a datetime-local input.
const DateTimeLocalLayout = "2006-01-02T15:04"
