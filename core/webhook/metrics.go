package webhook

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Reasons of a failed attempt, the reason label of
// seatflow_webhook_failed_attempts_total.
const (
	ReasonStatus  = "status"  // an answer other than 2xx (a redirect too)
	ReasonTimeout = "timeout" // no answer within Options.Timeout
	ReasonNetwork = "network" // no connection, or it broke
)

// Metrics count a dispatcher's attempts.
type Metrics struct {
	Delivered prometheus.Counter     // 2xx answers
	Failed    *prometheus.CounterVec // reason
}

// NewMetrics creates the counters, every reason at 0 (so increase() sees
// the first failure), and registers them on reg (nil: unregistered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Delivered: prometheus.NewCounter(prometheus.CounterOpts{Name: "seatflow_webhook_delivered_total",
			Help: "Webhook events the storefront answered with 2xx."}),
		Failed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "seatflow_webhook_failed_attempts_total",
			Help: "Webhook attempts that failed and will be retried, by reason (status: not 2xx; timeout; network)."},
			[]string{"reason"}),
	}
	for _, r := range []string{ReasonStatus, ReasonTimeout, ReasonNetwork} {
		m.Failed.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.Delivered, m.Failed)
	}
	return m
}

// backlogTimeout bounds the outbox query of one scrape, so a slow database
// does not hold up the scrape of every other metric.
const backlogTimeout = 5 * time.Second

// BacklogCollector exports what the outbox holds undelivered, read from the
// database at each scrape (every instance sees the whole outbox): the count
// and the age of the oldest, which grows while the storefront refuses or
// cannot be reached. A failed read leaves both out of that scrape and
// counts seatflow_webhook_backlog_errors_total.
type BacklogCollector struct {
	backlog       func(context.Context) (Backlog, error)
	count, oldest *prometheus.Desc
	errs          *prometheus.Desc
	failed        atomic.Int64
}

// NewBacklogCollector returns the collector over backlog (Outbox.WebhookBacklog).
func NewBacklogCollector(backlog func(context.Context) (Backlog, error)) *BacklogCollector {
	return &BacklogCollector{
		backlog: backlog,
		count: prometheus.NewDesc("seatflow_webhook_backlog",
			"Webhook events not yet delivered, counted in the outbox at scrape.", nil, nil),
		oldest: prometheus.NewDesc("seatflow_webhook_oldest_undelivered_seconds",
			"Age of the oldest webhook event not yet delivered (0: none), at scrape.", nil, nil),
		errs: prometheus.NewDesc("seatflow_webhook_backlog_errors_total",
			"Scrapes whose read of the webhook outbox failed (the backlog gauges were left out).", nil, nil),
	}
}

func (c *BacklogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.count
	ch <- c.oldest
	ch <- c.errs
}

func (c *BacklogCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), backlogTimeout)
	defer cancel()
	if b, err := c.backlog(ctx); err != nil {
		c.failed.Add(1)
	} else {
		age := 0.0
		if !b.Oldest.IsZero() {
			age = max(time.Since(b.Oldest).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(c.count, prometheus.GaugeValue, float64(b.Undelivered))
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, age)
	}
	ch <- prometheus.MustNewConstMetric(c.errs, prometheus.CounterValue, float64(c.failed.Load()))
}
