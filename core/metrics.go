package core

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the engine's Prometheus collectors, registered on a private
// registry by the caller (no global registry).
type Metrics struct {
	OrdersPlaced     prometheus.Counter
	PlaceRejected    *prometheus.CounterVec // reason: seat_unavailable|purchase_limit
	OrdersEnded      *prometheus.CounterVec // status, reason
	TimeoutFired     *prometheus.CounterVec // outcome: ignored|rearmed|cancelled|resent|deferred
	TimeoutSendFail  prometheus.Counter
	TimeoutEarly     prometheus.Counter     // messages delivered well before their due time
	RearmHops        *prometheus.CounterVec // level
	TimeoutSends     prometheus.Counter     // delay-queue messages sent, each of one or more orders' timeouts
	Payments         *prometheus.CounterVec // result
	Discrepancies    *prometheus.CounterVec // kind
	SeatStoreFailure *prometheus.CounterVec // op: release|sell|compensate|unblock
	CancelLateness   *prometheus.HistogramVec
	HoldsExtended    prometheus.Counter
	Refunds          *prometheus.CounterVec // outcome: refunded|requested|rejected
	// TimeoutDeadLetters counts timeout messages given up on after
	// SEATFLOW_TIMEOUT_MAX_ATTEMPTS failures (moved to dead_letter).
	TimeoutDeadLetters prometheus.Counter
	// TimeoutHandle times each delivered timeout message, by outcome
	// (TimeoutFired's, or failed) and queue (TimeoutHandler).
	TimeoutHandle *prometheus.HistogramVec
	// GroupCommitBatch counts the writes of each group commit (groupcommit.go)
	// by writer (place, events, cancel); GroupCommitFallbacks the placement
	// batches that broke a constraint, and the cancel batches that failed,
	// that were then written one by one.
	GroupCommitBatch     *prometheus.HistogramVec
	GroupCommitFallbacks *prometheus.CounterVec
	// The waiting list (waitlist.go, handoff.go): entries added; offers
	// made, accepted (paid) and expired (ended unpaid); the time from a
	// hold's end to its seats' offer.
	WaitlistJoins   prometheus.Counter
	WaitlistOffers  *prometheus.CounterVec // outcome: offered|accepted|expired
	WaitlistHandoff prometheus.Histogram
}

// Group-commit writers, the writer label of the group-commit metrics.
const (
	WriterPlace  = "place"
	WriterEvents = "events"
	WriterCancel = "cancel"
	WriterPay    = "pay"
)

// Expiry paths: which path cancelled an expired order, the label of
// seatflow_expiry_lag_seconds. Customer and staff cancels have none: they
// are not the clock running late.
const (
	PathTimeout   = "timeout"   // the order's own timeout message
	PathSweep     = "sweep"     // reconcile's fast expired_pending sweep
	PathReconcile = "reconcile" // a full reconcile run
)

// ActorSweep is the actor the fast sweep cancels as (with ReasonReconcile),
// so that the order row itself tells the sweep from a full run.
const ActorSweep = "sweep"

// ExpiryPath returns the path of a cancel with this reason and actor, or ""
// when the cancel is not an expiry (customer, staff).
func ExpiryPath(reason, actor string) string {
	switch {
	case reason == ReasonTimeout:
		return PathTimeout
	case reason == ReasonReconcile && actor == ActorSweep:
		return PathSweep
	case reason == ReasonReconcile:
		return PathReconcile
	}
	return ""
}

// ExpiryLagBuckets are the upper bounds (seconds) of the expiry-lag
// histogram: a timeout is normally late by up to about the delay slack; a
// sweep by up to its period; a full reconcile by minutes.
var ExpiryLagBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 2.5, 5, 10, 30, 60, 300, 900}

// NewMetrics creates the collectors and registers them on reg (nil: unregistered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		OrdersPlaced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seatflow_orders_placed_total", Help: "Orders placed (seats locked and order committed)."}),
		PlaceRejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_place_rejected_total", Help: "Placements rejected, by reason."}, []string{"reason"}),
		OrdersEnded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_orders_ended_total", Help: "Orders that left pending, by final status and reason."}, []string{"status", "reason"}),
		TimeoutFired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_timeout_messages_total", Help: "Timeout messages handled, by outcome."}, []string{"outcome"}),
		TimeoutSendFail: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seatflow_timeout_send_failures_total", Help: "Timeout messages that could not be sent (reconcile recovers the order)."}),
		TimeoutEarly: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seatflow_timeout_early_deliveries_total",
			Help: "Timeout messages delivered well before their due time: the broker ignores the delay or its level table differs (a configuration error)."}),
		RearmHops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_timeout_hops_total", Help: "Orders' timeouts sent (the first at placement, then each re-arm), by delay level (0 = exact timer); one message carries many (seatflow_timeout_sends_total)."}, []string{"level"}),
		TimeoutSends: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seatflow_timeout_sends_total",
			Help: "Messages sent to the delay queue; each carries the timeouts of one or more orders (seatflow_timeout_hops_total counts those)."}),
		Payments: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_payments_total", Help: "Payment callbacks, by result."}, []string{"result"}),
		Discrepancies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_discrepancies_total", Help: "Payments that could not be applied, by kind."}, []string{"kind"}),
		SeatStoreFailure: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_seat_store_failures_total", Help: "Seat-store writes that failed after a DB commit, by operation (reconcile repairs them)."}, []string{"op"}),
		CancelLateness: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "seatflow_expiry_lag_seconds",
			Help:    "Time from expire_time to the cancel of an expired order, by the path that cancelled it (timeout, sweep, reconcile).",
			Buckets: ExpiryLagBuckets,
		}, []string{"path"}),
		HoldsExtended: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seatflow_holds_extended_total", Help: "Pending holds whose expiry was pushed later."}),
		Refunds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_refunds_total", Help: "Refunds of paid orders, by outcome (refunded, requested for approval, rejected)."}, []string{"outcome"}),
		TimeoutHandle: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "seatflow_timeout_handle_seconds",
			Help:    "Time one delivered timeout message took to handle, by outcome (failed: it is delivered again) and queue (dbqueue, rocketmq).",
			Buckets: TimeoutHandleBuckets,
		}, []string{"outcome", "queue"}),
	}
	m.GroupCommitBatch = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "seatflow_group_commit_batch_size",
		Help:    "Writes per group-commit transaction, by writer (place: placements; events: after-commit timeline rows; cancel: cancels).",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64},
	}, []string{"writer"})
	m.GroupCommitFallbacks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "seatflow_group_commit_fallbacks_total",
		Help: "Group-commit batches rolled back (placements: a constraint, a seat taken in the DB or a code in use; cancels: any failure) and written one by one, by writer (place, cancel)."}, []string{"writer"})
	m.TimeoutDeadLetters = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "seatflow_timeout_dead_letters_total",
		Help: "Timeout messages that failed every allowed attempt and became dead letters (listed in the console)."})
	m.WaitlistJoins = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "seatflow_waitlist_joins_total", Help: "Entries added to shows' waiting lists."})
	m.WaitlistOffers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "seatflow_waitlist_offers_total",
		Help: "Waiting-list offers, by outcome: offered (seats handed to an entry), accepted (its order paid), expired (its order ended unpaid)."}, []string{"outcome"})
	m.WaitlistHandoff = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "seatflow_waitlist_handoff_seconds",
		Help:    "Time from a hold's end (its expiry, or the cancel, refund or unblock) to its seats held by a waiting-list offer.",
		Buckets: ExpiryLagBuckets})
	if reg != nil {
		reg.MustRegister(m.TimeoutDeadLetters, m.WaitlistJoins, m.WaitlistOffers, m.WaitlistHandoff)
	}
	if reg != nil {
		reg.MustRegister(m.OrdersPlaced, m.PlaceRejected, m.OrdersEnded, m.TimeoutFired, m.TimeoutSendFail,
			m.TimeoutEarly, m.RearmHops, m.TimeoutSends, m.Payments, m.Discrepancies, m.SeatStoreFailure, m.CancelLateness, m.HoldsExtended, m.Refunds,
			m.TimeoutHandle, m.GroupCommitBatch, m.GroupCommitFallbacks)
	}
	m.zero()
	return m
}

// TimeoutHandleBuckets are the upper bounds (seconds) of the handling-time
// histogram: a handler is a read and one transaction, milliseconds when
// well; seconds mean a slow store (the RocketMQ handler gives up at 30 s).
var TimeoutHandleBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// OutcomeFailed labels a timeout message whose handler returned an error
// (it is delivered again) in seatflow_timeout_handle_seconds.
const OutcomeFailed = "failed"

// timeoutOutcomes are every outcome label of a handled timeout message.
var timeoutOutcomes = []string{OutcomeIgnored, OutcomeRearmed, OutcomeCancelled, OutcomeResent, OutcomeDeferred}

// zero creates the series of every label value known up front at 0. A
// series born at its first event hides that event from rate() and
// increase(), and an alert on it has nothing to judge until then.
func (m *Metrics) zero() {
	for _, r := range []string{"seat_unavailable", "purchase_limit"} {
		m.PlaceRejected.WithLabelValues(r)
	}
	for _, r := range []string{ReasonTimeout, ReasonCustomer, ReasonStaff, ReasonReconcile, ReasonShowCancelled} {
		m.OrdersEnded.WithLabelValues(StatusCancelled.String(), r)
	}
	m.OrdersEnded.WithLabelValues(StatusPaid.String(), "payment")
	m.OrdersEnded.WithLabelValues(StatusRefunded.String(), "refund")
	for _, o := range timeoutOutcomes {
		m.TimeoutFired.WithLabelValues(o)
	}
	for _, r := range []string{string(PaymentApplied), string(PaymentDuplicate), string(PaymentDiscrepancy),
		DiscrepancyTxnConflict, paymentAmountMismatch} {
		m.Payments.WithLabelValues(r)
	}
	for _, k := range []string{DiscrepancyPaidAfterCancel, DiscrepancySecondPayment, DiscrepancyAmountMismatch,
		DiscrepancyPaidAfterRefund, DiscrepancyUnknownOrder, DiscrepancyTxnConflict} {
		m.Discrepancies.WithLabelValues(k)
	}
	for _, op := range []string{"release", "sell", "compensate", "unblock", "transfer", seatReleaseOpRefund} {
		m.SeatStoreFailure.WithLabelValues(op)
	}
	for _, p := range []string{PathTimeout, PathSweep, PathReconcile} {
		m.CancelLateness.WithLabelValues(p)
	}
	for _, o := range []RefundState{RefundDone, RefundRequested, RefundRejected} {
		m.Refunds.WithLabelValues(string(o))
	}
	for _, w := range []string{WriterPlace, WriterEvents, WriterCancel, WriterPay} {
		m.GroupCommitBatch.WithLabelValues(w)
	}
	m.GroupCommitFallbacks.WithLabelValues(WriterPlace)
	m.GroupCommitFallbacks.WithLabelValues(WriterCancel)
	m.GroupCommitFallbacks.WithLabelValues(WriterPay)
	for _, o := range []WaitState{WaitOffered, WaitAccepted, WaitExpired} {
		m.WaitlistOffers.WithLabelValues(string(o))
	}
}

// zeroHops creates the hop counter of every delay level p can choose.
func (m *Metrics) zeroHops(p DelayPolicy) {
	if p.Mode == DelayTimer {
		m.RearmHops.WithLabelValues("0")
		return
	}
	for i := range p.Levels {
		m.RearmHops.WithLabelValues(strconv.Itoa(i + 1))
	}
}

// overdueTimeout bounds the count query of one scrape: a slow database must
// not hold the scrape until Prometheus gives up on all the other metrics.
const overdueTimeout = 5 * time.Second

// OverdueCollector exports seatflow_orders_overdue, the orders still pending
// past their expire_time (the app gives the slack the delay levels allow),
// counted by the database at each scrape (an indexed
// COUNT: it is what the whole system sees, not one instance). A failed
// count leaves the gauge out of that scrape and counts
// seatflow_orders_overdue_errors_total, so a database outage never fails
// the scrape of every other metric.
type OverdueCollector struct {
	count  func(context.Context) (int, error)
	gauge  *prometheus.Desc
	errs   *prometheus.Desc
	failed atomic.Int64
}

// NewOverdueCollector returns the collector over count, which should count
// the orders with status pending and expire_time before now.
func NewOverdueCollector(count func(context.Context) (int, error)) *OverdueCollector {
	return &OverdueCollector{
		count: count,
		gauge: prometheus.NewDesc("seatflow_orders_overdue",
			"Orders still pending more than the delay slack plus 1 s after their expire_time (their cancel is late), counted at scrape.", nil, nil),
		errs: prometheus.NewDesc("seatflow_orders_overdue_errors_total",
			"Scrapes whose overdue count failed (the gauge was left out).", nil, nil),
	}
}

func (c *OverdueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.gauge
	ch <- c.errs
}

func (c *OverdueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), overdueTimeout)
	defer cancel()
	if n, err := c.count(ctx); err != nil {
		c.failed.Add(1)
	} else {
		ch <- prometheus.MustNewConstMetric(c.gauge, prometheus.GaugeValue, float64(n))
	}
	ch <- prometheus.MustNewConstMetric(c.errs, prometheus.CounterValue, float64(c.failed.Load()))
}
