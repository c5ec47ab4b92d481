package reconcile

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"seatflow/core"
	"seatflow/core/store"
)

// Check names, used in logs, metrics labels, stored runs and the console.
const (
	CheckExpiredPending  = "expired_pending"
	CheckPaidNotSold     = "paid_not_sold"
	CheckOrphanOrderSeat = "orphan_order_seat"
	CheckStaleRedisLock  = "stale_redis_lock"
	CheckLimitDrift      = "limit_drift"
	CheckOpenDiscrepancy = "open_discrepancy"
	CheckRefundedSold    = "refunded_sold"
	CheckBlockDrift      = "block_drift"
	CheckUnsentTimeout   = "unsent_timeout"
	CheckWaitlistOffer   = "waitlist_offer"
)

// Actor is who reconcile's repairs are recorded as.
const Actor = "reconcile"

// Actions an Item reports: what the check did, or would do in a dry run.
const (
	ActionCancel      = "cancel"       // expired pending order → cancel-and-release
	ActionMarkSold    = "mark_sold"    // paid order's seats → sold in the seat store
	ActionDelete      = "delete_row"   // orphan order_seat row → deleted
	ActionRelease     = "release"      // stale seat-store lock → freed
	ActionRelock      = "relock"       // pending order's lost lock → locked again
	ActionSetLimit    = "set_limit"    // purchase counter → the DB's count
	ActionReport      = "report"       // open discrepancy → listed for ops
	ActionReleaseSold = "release_sold" // refunded order's seats still sold → freed
	ActionBlock       = "block"        // seat_block row the seat store lost → blocked again
	ActionUnblock     = "unblock"      // seat-store block with no seat_block row → unblocked
	ActionResend      = "resend"       // timeout hop claimed but never sent → sent
	ActionTransfer    = "transfer"     // a waiting-list offer's seats held by an ended order → the offer's
	ActionRequeue     = "requeue"      // an offered entry whose order is missing → back in line
)

// Check is one reconcile check: it finds one kind of anomaly and, unless
// dryRun, repairs it through the same paths the engine uses.
type Check interface {
	Name() string
	// Run returns what it found and fixed. An error means the check could
	// not look at all (a store is down); a failed repair of one item is
	// counted in Result.Errors and the check goes on with the next.
	Run(ctx context.Context, env *Env, dryRun bool) (Result, error)
}

// Result is one check's outcome in one run.
type Result struct {
	Found  int
	Fixed  int
	Errors int
	Items  []Item // the first Env.SampleSize of the items found
}

// Item is one anomaly found: what it is and what was (or would be) done.
type Item struct {
	OrderNo string   `json:"order_no,omitempty"`
	ShowID  int64    `json:"show_id,omitempty"`
	SeatIDs []string `json:"seat_ids,omitempty"`
	UserID  int64    `json:"user_id,omitempty"`
	Action  string   `json:"action"`
	Detail  string   `json:"detail,omitempty"` // in English, for logs and the command line
	// Notes are Detail sentence by sentence for the console, which says
	// them in the reader's language.
	Notes []core.Phrase `json:"notes,omitempty"`
	Fixed bool          `json:"fixed"`
	Error string        `json:"error,omitempty"`
}

// statusWord is an order status as a word of the console's catalog.
func statusWord(s core.OrderStatus) core.PhraseArg { return core.ArgWord("status." + s.String()) }

// say sets the item's detail: english for logs and the command line, ph
// for the console.
func (it *Item) say(english string, ph core.Phrase) {
	it.Detail, it.Notes = english, []core.Phrase{ph}
}

// sayAlso adds a sentence to the item's detail.
func (it *Item) sayAlso(english string, ph core.Phrase) {
	it.Detail += "; " + english
	it.Notes = append(it.Notes, ph)
}

// Env is what checks share within one run.
type Env struct {
	Engine *core.Engine
	DB     *store.DB
	Seats  SeatStore
	Log    *slog.Logger
	// Now is the run's start; every check judges "expired" and "older than
	// the grace period" against it.
	Now time.Time
	// Grace protects work in flight: a seat-store lock younger than it (an
	// order being placed right now), or an order closed less than it ago
	// (its own release or sell still on the way), is never repaired.
	Grace time.Duration
	// OnSaleSince: shows that started before it are over; their seat state
	// can no longer sell anything and is not compared.
	OnSaleSince time.Time
	PageSize    int
	SampleSize  int
	// Trigger is what started the run (TriggerSweep, ...): the repairs of
	// the fast sweep are recorded as its own actor.
	Trigger string

	// only, when set, limits the run to the items it returns true for
	// (Reconciler.Apply); the other anomalies are neither repaired nor
	// reported.
	only      func(check string, it Item) bool
	shows     []int64 // shows on sale, read once per run
	showsRead bool
}

// wants reports whether the run deals with the item (see Env.only).
func (e *Env) wants(check string, it Item) bool { return e.only == nil || e.only(check, it) }

// cutoff is Now - Grace: locks taken and orders closed before it are settled.
func (e *Env) cutoff() time.Time { return e.Now.Add(-e.Grace) }

// ShowsOnSale returns the shows whose seat state the seat-level checks
// compare; read once per run.
func (e *Env) ShowsOnSale(ctx context.Context) ([]int64, error) {
	if e.showsRead {
		return e.shows, nil
	}
	ids, err := e.DB.ShowsOnSale(ctx, e.OnSaleSince)
	if err != nil {
		return nil, err
	}
	e.shows, e.showsRead = ids, true
	return ids, nil
}

// repaired writes the repaired event on the order a repair touched. The
// repair itself is done; a failed write is returned so the caller counts it.
func (e *Env) repaired(ctx context.Context, check, orderNo string, detail map[string]any) error {
	d := map[string]any{"check": check}
	for k, v := range detail {
		d[k] = v
	}
	err := e.DB.AddEvent(ctx, core.Event{OrderNo: orderNo, At: e.Now, Kind: core.EventRepaired, Detail: d})
	if err != nil {
		return fmt.Errorf("record repair of %s: %w", orderNo, err)
	}
	return nil
}

// add counts item as found (and fixed or failed) and keeps it in the sample.
func (r *Result) add(env *Env, check string, it Item) {
	r.Found++
	if it.Fixed {
		r.Fixed++
	}
	if it.Error != "" {
		r.Errors++
		env.Log.Error("reconcile repair failed", "check", check, "order_no", it.OrderNo,
			"show_id", it.ShowID, "seat_ids", it.SeatIDs, "action", it.Action, "err", it.Error)
	} else if it.Fixed {
		env.Log.Info("reconcile repaired", "check", check, "order_no", it.OrderNo,
			"show_id", it.ShowID, "seat_ids", it.SeatIDs, "action", it.Action, "detail", it.Detail)
	}
	if len(r.Items) < env.SampleSize {
		r.Items = append(r.Items, it)
	}
}

// Key names the anomaly independently of what was done about it, so that
// the item a dry run listed can be asked for again (Reconciler.Apply): the
// action (which names the check), the order, show, user and seats, as the
// check found them — before a repair, which may learn more (expired_pending
// learns the seats from the cancel). web.ReconcileItem.Key mirrors it.
func (it Item) Key() string {
	return fmt.Sprintf("%s|%s|%d|%d|%s", it.Action, it.OrderNo, it.ShowID, it.UserID, strings.Join(it.SeatIDs, ","))
}

// fail records err on the item.
func (it *Item) fail(err error) { it.Error = err.Error() }
