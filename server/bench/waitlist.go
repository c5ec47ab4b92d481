package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"sync/atomic"
	"time"

	"seatflow/core"
)

// The waiting list (issue 33): on a sold-out show o.Holds one-seat holds
// come due at o.ExpiryRate a second, first with no list (the baseline: the
// rate the server cancels at), then on a second show whose list holds
// o.Entries entries (count 1), where every ending hands its seat on as an
// offer in the ending's transaction. Measured from the timeline the server
// recorded: each offer's created_at − the expire_at of the hold it came
// from (its placed event's from_order), p50 and p99; offers a second over
// the window beside the baseline's cancels a second. Over both expiry
// windows o.Hammer clients place public orders on the show's seats as fast
// as they go: on the list's show none may win a seat being handed on; on
// the baseline's they buy the seats that go back on sale, as a sold-out
// show's buyers would, and the baseline carries the same load as the list.

// Targets of the issue (real stack).
const (
	handoffP99Target = 2 * time.Second
	offerRateTarget  = 0.5 // offers/s ÷ the baseline's cancels/s
)

const (
	waitlistOfferTTL   = time.Hour              // no offer ends during the run
	waitlistTTLMargin  = 5 * time.Second        // past the placing window, before the first hold comes due
	hammerGrace        = time.Second            // hammering on after the last ending: its seat store transfer follows the commit
	hammerLead         = 500 * time.Millisecond // the hammer and the ledger start this long before the first expiry
	waitlistEntryUsers = 10_000_000             // entries' user ids start here, the holds' at 1
	hammerUsers        = 20_000_000             // the hammer's, one per request (no purchase limit in the way)
)

// waitlistHoldTTL is the server's hold TTL: the holds are placed over
// holds/rate seconds and must not come due before the last is placed, or
// the expiry rate would be the placement's.
func waitlistHoldTTL(o Options) time.Duration {
	return time.Duration(float64(o.Holds)/o.ExpiryRate*float64(time.Second)) + waitlistTTLMargin
}

// waitlistPhase is one show's holds coming due: the baseline's with no
// list, the list's with o.Entries waiting.
type waitlistPhase struct {
	Name    string     `json:"name"` // baseline or list
	Show    int64      `json:"show_id"`
	Entries int        `json:"entries"`
	Join    loadResult `json:"join,omitzero"`
	Place   loadResult `json:"place"`
	// Holds ended and why; "pending" counts those that never did.
	Holds   int            `json:"holds"`
	Reasons map[string]int `json:"end_reasons"`
	// ExpiryRate is how fast the holds came due (over their expire_at
	// spread), CancelRate how fast they ended (from the first expiry to
	// the last ending), Lateness each ending's closed_at − expire_at.
	ExpiryRate float64 `json:"expiries_per_s"`
	CancelRate float64 `json:"cancels_per_s"`
	Lateness   Summary `json:"lateness"`
	// Offers made, Handoff each one's created_at − its hold's expire_at,
	// OfferRate offers from the first expiry to the last offer.
	Offers    int     `json:"offers"`
	Handoff   Summary `json:"hold_end_to_offer"`
	OfferRate float64 `json:"offers_per_s"`
	Offered   int     `json:"entries_offered"` // entries in state offered afterwards
	OnSale    int     `json:"seats_on_sale"`   // seats the seat map shows available afterwards
	// Hammer is the public placements during the expiry window: outcome
	// 201 is a win (on the list's show: a seat taken while handed on), 409
	// a refusal.
	Hammer     loadResult    `json:"hammer,omitzero"`
	Wins       []string      `json:"public_wins,omitempty"` // order numbers, the first few
	PublicInDB int           `json:"public_orders_in_db"`   // the hammer's orders the database holds
	PublicHeld int           `json:"public_orders_held"`    // of those, the ones still holding their seats (a slow phase outlives their holds)
	Check      seatCheck     `json:"seat_check"`
	CPU        cpuUsage      `json:"cpu,omitzero"` // over the expiry window, per ending (baseline) or offer (list)
	Wait       time.Duration `json:"wait_ns"`
}

// waitlistResult is the waitlist scenario.
type waitlistResult struct {
	Mode    core.DelayMode `json:"delay_mode"`
	HoldTTL time.Duration  `json:"hold_ttl_ns"`
	Asked   float64        `json:"expiries_per_s_asked"` // --expiry-rate
	// HammerClients place public orders during both expiry windows.
	HammerClients int           `json:"hammer_clients"`
	HammerRate    float64       `json:"hammer_per_s_asked"` // 0: as fast as they go
	Baseline      waitlistPhase `json:"baseline"`
	List          waitlistPhase `json:"list"`
}

// runWaitlist starts the stack with the short hold TTL and the stack's
// default delay mode, and runs both phases.
func runWaitlist(ctx context.Context, o Options, getenv func(string) string, p *progress) (res waitlistResult, err error) {
	s, err := startStack(ctx, o, stackConfig{holdTTL: waitlistHoldTTL(o)}, getenv, p)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, s.close(context.WithoutCancel(ctx))) }()
	return waitlistPhases(ctx, o, s, p)
}

// waitlistPhases runs the baseline, then the list, on a started stack.
func waitlistPhases(ctx context.Context, o Options, s *stack, p *progress) (waitlistResult, error) {
	res := waitlistResult{Mode: serverPolicy(o.Stack, "").Mode, HoldTTL: waitlistHoldTTL(o), Asked: o.ExpiryRate,
		HammerClients: o.Hammer, HammerRate: o.HammerRate}
	var err error
	if res.Baseline, err = waitlistOnce(ctx, o, s, "baseline", p); err != nil {
		return res, err
	}
	res.List, err = waitlistOnce(ctx, o, s, "list", p)
	return res, err
}

// waitlistOnce is one phase: a show of exactly o.Holds seats, (for the
// list) its list and entries, the holds paced at o.ExpiryRate, then the
// wait for their endings, the hammer running over it.
func waitlistOnce(ctx context.Context, o Options, s *stack, name string, p *progress) (waitlistPhase, error) {
	ph := waitlistPhase{Name: name}
	cols := showCols(o.Holds)
	show, plan, err := s.newShow(ctx, o.Holds/cols, cols)
	if err != nil {
		return ph, err
	}
	ph.Show = show.ID
	list := name == "list"
	if list {
		if ph.Join, err = s.openWaitlist(ctx, o, show.ID, p); err != nil {
			return ph, err
		}
		ph.Entries = o.Entries
	}
	placedAt := time.Now()
	ph.Place = runLoad(ctx, loadSpec{Label: fmt.Sprintf("waitlist %s: place %d holds at %.0f/s", name, o.Holds, o.ExpiryRate),
		Clients: o.Clients, Ops: int64(o.Holds), Duration: o.MaxTime,
		Interval: time.Duration(float64(time.Second) / o.ExpiryRate)}, p,
		func(ctx context.Context, i int64) (string, error) {
			_, err := s.api.place(ctx, i+1, show.ID, []string{plan[i].SeatID})
			return "ok", err
		})
	if err := ph.Place.failure(); err != nil || ph.Place.Errors > 0 {
		return ph, fmt.Errorf("waitlist %s: place: %v %s", name, err, ph.Place.FirstErr)
	}
	// The expiry window opens one TTL after the first placement; the
	// hammer and the CPU ledger start just before it.
	time.Sleep(time.Until(placedAt.Add(waitlistHoldTTL(o) - hammerLead)))
	var ledger *cpuLedger
	if s.child != nil { // in process (the CI test) there is no child to follow
		ledger = s.startCPULedger()
	}
	var prof *serverProfile
	if list && o.CPUProfile != "" {
		prof = startProfile(ctx, s.pprofAddr, o.ProfileTime)
		p.logf("CPU profile of the server for %v, into %s", o.ProfileTime, o.CPUProfile)
	}
	var stop atomic.Bool
	hammered := make(chan struct{})
	go func() {
		defer close(hammered)
		if o.Hammer > 0 {
			ph.Hammer, ph.Wins = hammer(ctx, o, s, show.ID, plan, &stop)
		}
	}()
	start := time.Now()
	werr := waitHoldsEnded(ctx, o, s, name, show.ID, p)
	ph.Wait = time.Since(start)
	var end cpuSample
	if ledger != nil {
		end = ledger.sample()
	}
	time.Sleep(hammerGrace)
	stop.Store(true)
	<-hammered
	if prof != nil {
		werr = errors.Join(werr, prof.save(o.CPUProfile))
	}
	if err := collectWaitlist(ctx, s, &ph); err != nil {
		return ph, errors.Join(werr, err)
	}
	if ledger != nil {
		ops := int64(ph.Holds - ph.Reasons["pending"])
		if list {
			ops = int64(ph.Offers)
		}
		ph.CPU = account(ledger.procs, ledger.start, end, ops)
	}
	if werr != nil {
		return ph, werr
	}
	return ph, ph.failure(list)
}

// showCols is the seats per row of a show of exactly seats seats: the
// largest divisor up to 100, so the show is sold out by the holds alone.
func showCols(seats int) int {
	for c := min(seats, 100); c > 1; c-- {
		if seats%c == 0 {
			return c
		}
	}
	return 1
}

// failure says what is wrong with a phase's outcome: correctness only,
// never timings.
func (ph waitlistPhase) failure(list bool) error {
	var errs []error
	if n := ph.Reasons["pending"]; n > 0 {
		errs = append(errs, fmt.Errorf("%d of %d holds never ended", n, ph.Holds))
	}
	if ph.Check.DoubleOrderRow+ph.Check.DoubleSold > 0 || list && !ph.Check.ok() {
		errs = append(errs, fmt.Errorf("seat check: %+v", ph.Check))
	}
	if list {
		if want := min(ph.Holds, ph.Entries); ph.Offers != want || ph.Offered != want {
			errs = append(errs, fmt.Errorf("%d offers, %d entries offered: want %d", ph.Offers, ph.Offered, want))
		}
		if wins := ph.Hammer.Outcomes["201"]; wins > 0 || ph.PublicInDB > 0 {
			errs = append(errs, fmt.Errorf("public placements won freed seats: %d answered 201, %d in the database (%v)",
				wins, ph.PublicInDB, ph.Wins))
		}
		if want := max(0, ph.Holds-ph.Entries); ph.OnSale != want {
			errs = append(errs, fmt.Errorf("%d seats on sale afterwards, want %d", ph.OnSale, want))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("waitlist %s: %w", ph.Name, err)
	}
	return nil
}

// openWaitlist enables show's list (joins at any time, offers held long
// enough not to end during the run) and joins o.Entries users to it.
func (s *stack) openWaitlist(ctx context.Context, o Options, show int64, p *progress) (loadResult, error) {
	body := fmt.Appendf(nil, `{"enabled":true,"join_when":%q,"offer_ttl_seconds":%d}`, core.JoinWhenAlways,
		int64(waitlistOfferTTL/time.Second))
	if err := s.api.do(ctx, http.MethodPut, waitlistPath(show), body, nil, nil); err != nil {
		return loadResult{}, fmt.Errorf("waitlist: enable the list: %w", err)
	}
	r := runLoad(ctx, loadSpec{Label: fmt.Sprintf("waitlist list: %d entries join", o.Entries), Clients: o.Clients,
		Ops: int64(o.Entries), Duration: o.MaxTime}, p,
		func(ctx context.Context, i int64) (string, error) {
			body := fmt.Appendf(nil, `{"user_id":%d,"count":1}`, waitlistEntryUsers+i)
			status, err := s.api.doStatus(ctx, http.MethodPost, waitlistPath(show), body, nil, nil)
			if err == nil && status != http.StatusCreated {
				err = fmt.Errorf("join: HTTP %d, want 201 (a new entry)", status)
			}
			return "joined", err
		})
	if err := r.failure(); err != nil || r.Errors > 0 {
		return r, fmt.Errorf("waitlist: join: %v %s", err, r.FirstErr)
	}
	return r, nil
}

func waitlistPath(show int64) string { return fmt.Sprintf("/api/v1/shows/%d/waitlist", show) }

// maxWins bounds the winning order numbers quoted in the report.
const maxWins = 10

// hammerInterval paces the hammer at o.HammerRate (0: as fast as its
// clients go). Flat out on 2 shared cores the hammer's 409s take the CPU
// the endings need, and the figures would be the hammer's.
func hammerInterval(o Options) time.Duration {
	if o.HammerRate == 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / o.HammerRate)
}

// hammer places public orders on random seats of show, o.Hammer clients
// at o.HammerRate, until stop: on the list's show each 201 is a seat taken
// from the list.
func hammer(ctx context.Context, o Options, s *stack, show int64, plan []core.Seat, stop *atomic.Bool) (loadResult, []string) {
	var user atomic.Int64
	wins := make(chan string, maxWins)
	r := runLoad(ctx, loadSpec{Label: fmt.Sprintf("waitlist list: %d public clients hammer the seats", o.Hammer),
		Clients: o.Hammer, Duration: o.MaxTime, Interval: hammerInterval(o)}, newProgress(io.Discard, true), // the endings' progress is shown
		func(ctx context.Context, _ int64) (string, error) {
			if stop.Load() {
				return "", errDone
			}
			seat := plan[mrand.IntN(len(plan))].SeatID
			pl, err := s.api.place(ctx, hammerUsers+user.Add(1), show, []string{seat})
			if _, conflict := isStatus(err, http.StatusConflict); conflict {
				return "409", nil
			}
			if err != nil {
				return "", err
			}
			select {
			case wins <- pl.OrderNo:
			default:
			}
			return "201", nil
		})
	close(wins)
	var out []string
	for w := range wins {
		out = append(out, w)
	}
	return r, out
}

// waitHoldsEnded waits, bounded by the TTL and o.MaxTime, until none of
// the show's holds (users 1..o.Holds) is pending.
func waitHoldsEnded(ctx context.Context, o Options, s *stack, name string, show int64, p *progress) error {
	var left atomic.Int64 // read by the progress line's goroutine
	count := func() error {
		var n int64
		err := s.db.X().GetContext(ctx, &n, `SELECT COUNT(*) FROM order_info WHERE show_id = ? AND status = ? AND user_id <= ?`,
			show, int(core.StatusPending), o.Holds)
		left.Store(n)
		return err
	}
	if err := count(); err != nil {
		return fmt.Errorf("waitlist %s: count pending: %w", name, err)
	}
	placed := left.Load()
	t := p.track(fmt.Sprintf("waitlist %s: holds ended", name), placed, func() (int64, string) { return placed - left.Load(), "" })
	defer t.done()
	deadline := time.Now().Add(waitlistHoldTTL(o) + o.MaxTime)
	for left.Load() > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		if err := count(); err != nil {
			return fmt.Errorf("waitlist %s: count pending: %w", name, err)
		}
	}
	return nil // holds still pending are the phase's failure
}

// collectWaitlist reads the phase's outcome from the database (the
// timeline the server recorded) and the seat map.
func collectWaitlist(ctx context.Context, s *stack, ph *waitlistPhase) error {
	x := s.db.X()
	var orders []struct {
		OrderNo  string `db:"order_no"`
		UserID   int64  `db:"user_id"`
		Source   string `db:"source"`
		Created  int64  `db:"created_at"`
		ExpireAt int64  `db:"expire_at"`
		ClosedAt int64  `db:"closed_at"`
		Reason   string `db:"cancel_reason"`
		Status   int    `db:"status"`
	}
	if err := x.SelectContext(ctx, &orders, `SELECT order_no, user_id, source, created_at, expire_at, closed_at, cancel_reason, status
 FROM order_info WHERE show_id = ?`, ph.Show); err != nil {
		return fmt.Errorf("waitlist %s: read orders: %w", ph.Name, err)
	}
	expireAt := map[string]int64{}
	ends := newHoldEnds()
	var (
		maxOffer int64
		offers   []string
	)
	for _, o := range orders {
		switch {
		case o.Source == core.OrderSourceWaitlist:
			offers = append(offers, o.OrderNo)
			maxOffer = max(maxOffer, o.Created)
			continue
		case o.UserID >= hammerUsers:
			ph.PublicInDB++
			if core.OrderStatus(o.Status) != core.StatusCancelled {
				ph.PublicHeld++
			}
			continue
		}
		expireAt[o.OrderNo] = o.ExpireAt
		ends.add(o.ExpireAt, o.ClosedAt, o.Status, o.Reason)
	}
	ph.Holds, ph.Reasons = ends.holds, ends.reasons
	ph.Lateness = summarize(ends.late)
	ph.ExpiryRate, ph.CancelRate = ends.expiryRate(), ends.cancelRate()
	minExp := ends.minExp

	// Each offer's hold is its placed event's from_order.
	var evs []struct {
		OrderNo string `db:"order_no"`
		At      int64  `db:"at"`
		Detail  string `db:"detail"`
	}
	if err := x.SelectContext(ctx, &evs, `SELECT e.order_no, e.at, e.detail FROM order_event e
 JOIN order_info o ON o.order_no = e.order_no
 WHERE o.show_id = ? AND o.source = ? AND e.kind = ?`, ph.Show, core.OrderSourceWaitlist, core.EventPlaced); err != nil {
		return fmt.Errorf("waitlist %s: read offers' events: %w", ph.Name, err)
	}
	var handoff []time.Duration
	for _, ev := range evs {
		var d struct {
			From string `json:"from_order"`
		}
		if err := json.Unmarshal([]byte(ev.Detail), &d); err != nil {
			return fmt.Errorf("waitlist %s: placed event of %s: %w", ph.Name, ev.OrderNo, err)
		}
		exp, ok := expireAt[d.From]
		if !ok {
			return fmt.Errorf("waitlist %s: offer %s came from %q, not one of the holds", ph.Name, ev.OrderNo, d.From)
		}
		handoff = append(handoff, time.Duration(ev.At-exp)*time.Millisecond)
	}
	if len(handoff) != len(offers) {
		return fmt.Errorf("waitlist %s: %d offers, %d placed events", ph.Name, len(offers), len(handoff))
	}
	ph.Offers = len(offers)
	ph.Handoff = summarize(handoff)
	if maxOffer > minExp {
		ph.OfferRate = float64(ph.Offers) / (float64(maxOffer-minExp) / 1e3)
	}
	if err := x.GetContext(ctx, &ph.Offered, `SELECT COUNT(*) FROM waitlist_entry WHERE show_id = ? AND state = ?`,
		ph.Show, string(core.WaitOffered)); err != nil {
		return fmt.Errorf("waitlist %s: count offered entries: %w", ph.Name, err)
	}
	states, err := s.api.seatStates(ctx, ph.Show)
	if err != nil {
		return fmt.Errorf("waitlist %s: seat map: %w", ph.Name, err)
	}
	for _, st := range states {
		if st == core.SeatAvailable.String() {
			ph.OnSale++
		}
	}
	if ph.Check, err = checkSeats(ctx, s, []int64{ph.Show}); err != nil {
		return fmt.Errorf("waitlist %s: %w", ph.Name, err)
	}
	return nil
}

// waitlistRows turns the scenario into table rows: the list's figures
// beside the baseline of the same run and the targets.
func waitlistRows(stack string, res waitlistResult) []Row {
	row := func(metric string, v float64, unit string) Row {
		return Row{Scenario: ScenarioWaitlist, Stack: stack, Metric: metric, Value: v, Unit: unit}
	}
	b, l := res.Baseline, res.List
	p99 := row("list: hold end → offer p99", ms(l.Handoff.P99), "ms").vs("baseline: cancel lateness p99", ms(b.Lateness.P99))
	if l.Handoff.Count == 0 {
		p99 = p99.absent("no offer")
	} else {
		p99 = p99.target("≤ 2000 ms", l.Handoff.P99 <= handoffP99Target)
	}
	rate := row("list: offers/s (first expiry → last offer)", l.OfferRate, "/s").vs("baseline: cancels/s", b.CancelRate)
	rate = rate.target("≥ 0.5 × baseline", b.CancelRate > 0 && l.OfferRate >= offerRateTarget*b.CancelRate)
	wantOffers := min(l.Holds, l.Entries)
	wins := float64(l.Hammer.Outcomes["201"])
	rows := []Row{
		row("baseline: holds coming due/s", b.ExpiryRate, "/s").vs("asked (--expiry-rate)", res.Asked),
		row("baseline: cancels/s (first expiry → last cancel)", b.CancelRate, "/s").vs("holds coming due/s", b.ExpiryRate),
		row("baseline: cancel lateness p50", ms(b.Lateness.P50), "ms"),
		row("baseline: cancel lateness p99", ms(b.Lateness.P99), "ms"),
		row("list: holds coming due/s", l.ExpiryRate, "/s").vs("baseline", b.ExpiryRate),
		row("list: hold end → offer p50", ms(l.Handoff.P50), "ms").vs("baseline: cancel lateness p50", ms(b.Lateness.P50)),
		p99,
		rate,
		row("list: entries offered", float64(l.Offered), "").vs("entries", float64(l.Entries)).
			target(fmt.Sprintf("= %d", wantOffers), l.Offered == wantOffers && l.Offers == wantOffers),
		row("list: seats left on sale", float64(l.OnSale), "").vs("seats", float64(l.Holds)).
			target(fmt.Sprintf("= %d", max(0, l.Holds-l.Entries)), l.OnSale == max(0, l.Holds-l.Entries)),
		row("list: public placements that won a freed seat (201)", wins, "").vs("public placements", float64(l.Hammer.Ops)).
			target("= 0", wins == 0 && l.PublicInDB == 0),
		row("list: public placements refused (409)", float64(l.Hammer.Outcomes["409"]), "").vs("public placements", float64(l.Hammer.Ops)),
		row(fmt.Sprintf("list: public placements/s (%d clients, %.0f/s asked)", res.HammerClients, res.HammerRate), l.Hammer.Rate, "/s").
			vs("baseline", b.Hammer.Rate),
		row("baseline: public placements that took a freed seat (201)", float64(b.Hammer.Outcomes["201"]), "").
			vs("public placements", float64(b.Hammer.Ops)),
		twiceRowOf(row, b.Check, "baseline: ", false),
		twiceRowOf(row, l.Check, "list: ", true),
	}
	// In process (the CI test) there is no ledger: no rows rather than zeros.
	if b.CPU.Elapsed > 0 {
		rows = append(rows, cpuRows(row, "cancel (baseline)", "baseline expiry window", b.CPU)...)
	}
	if l.CPU.Elapsed > 0 {
		rows = append(rows, cpuRows(row, "offer (list)", "list expiry window", l.CPU)...)
	}
	return rows
}

// twiceRowOf is the seat check's row: a seat in two orders, and with
// store a seat store that disagrees with the database. The baseline's
// show is checked in the database only: the hammer's holds there come due
// from one TTL into its window, and the seat map shows a hold past its
// expiry free before its timeout ends it in the database.
func twiceRowOf(row func(string, float64, string) Row, c seatCheck, name string, store bool) Row {
	n, metric := c.DoubleOrderRow+c.DoubleSold, "seats held twice"
	if store {
		n, metric = n+c.Mismatch, metric+" or seat store ≠ DB"
	}
	return row(name+metric, float64(n), "").target("= 0", n == 0)
}
