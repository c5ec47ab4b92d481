package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"seatflow/core"
)

// Defaults of Options.
const (
	DefaultTimeout    = 10 * time.Second
	DefaultPoll       = time.Second
	DefaultBatch      = 16
	DefaultMinBackoff = time.Second
	DefaultMaxBackoff = 10 * time.Minute
)

// claimSlack is how much longer a claim lasts than its requests may: a
// POST is over by its timeout, and instances' clocks (which judge claims)
// may differ by up to SEATFLOW_MAX_CLOCK_SKEW, so no other instance claims
// an event while this one is sending it.
const claimSlack = 5 * time.Second

// stmtTimeout bounds each outbox statement a dispatcher runs.
const stmtTimeout = 10 * time.Second

// Of a refusing answer's body, last_error keeps the start; at most
// drainLimit more is read so the connection can be used again.
const (
	errorBodyLimit = 256
	drainLimit     = 64 << 10
)

// Options configure a Dispatcher; zero values take the defaults.
type Options struct {
	URL     string        // where events are POSTed; CheckURL must accept it
	Secret  string        // signs every request; required
	Timeout time.Duration // one request, connecting included; default 10s
	// Poll is how often the outbox is looked at when nothing calls Wake:
	// for events other instances wrote, and retries coming due. Default 1s.
	Poll time.Duration
	// Batch is the most events claimed at once, all POSTed side by side.
	// Default 16.
	Batch int
	// MinBackoff is the wait after an event's first failed attempt; it
	// doubles with each failure up to MaxBackoff. Defaults 1s and 10m.
	MinBackoff, MaxBackoff time.Duration
	Clock                  core.Clock   // due times, claims, delivered_at; default core.SystemClock
	Logger                 *slog.Logger // default slog.Default()
	Metrics                *Metrics     // default: counted, not registered
}

// Dispatcher delivers the outbox's events. Start runs it; Close stops it.
type Dispatcher struct {
	outbox Outbox
	opts   Options
	log    *slog.Logger
	client *http.Client
	wake   chan struct{}

	mu     sync.Mutex
	closed bool
	stop   context.CancelFunc // nil until Start
	done   chan struct{}      // closed when the loop Start began has ended
}

// New checks opts and returns a dispatcher that has not started.
func New(outbox Outbox, opts Options) (*Dispatcher, error) {
	if outbox == nil {
		return nil, errors.New("webhook: outbox is nil")
	}
	if err := CheckURL(opts.URL); err != nil {
		return nil, fmt.Errorf("webhook: %w", err)
	}
	if opts.Secret == "" {
		return nil, errors.New("webhook: no secret to sign with")
	}
	if opts.Timeout < 0 || opts.Poll < 0 || opts.Batch < 0 || opts.MinBackoff < 0 || opts.MaxBackoff < 0 {
		return nil, fmt.Errorf("webhook: options: Timeout %v, Poll %v, Batch %d, MinBackoff %v, MaxBackoff %v: none may be negative",
			opts.Timeout, opts.Poll, opts.Batch, opts.MinBackoff, opts.MaxBackoff)
	}
	opts.Timeout = orDefault(opts.Timeout, DefaultTimeout)
	opts.Poll = orDefault(opts.Poll, DefaultPoll)
	opts.Batch = orDefault(opts.Batch, DefaultBatch)
	opts.MinBackoff = orDefault(opts.MinBackoff, DefaultMinBackoff)
	opts.MaxBackoff = orDefault(opts.MaxBackoff, DefaultMaxBackoff)
	if opts.MaxBackoff < opts.MinBackoff {
		return nil, fmt.Errorf("webhook: options: MaxBackoff %v is below MinBackoff %v", opts.MaxBackoff, opts.MinBackoff)
	}
	if opts.Clock == nil {
		opts.Clock = core.SystemClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics(nil)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = opts.Batch // a batch's requests go side by side to one host
	return &Dispatcher{
		outbox: outbox,
		opts:   opts,
		log:    opts.Logger.With("component", "webhook"),
		// A redirect is not followed: the receiver's answer is its 3xx, a
		// failure, so a moved endpoint shows in last_error instead of
		// events going somewhere nobody configured.
		client: &http.Client{Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		wake: make(chan struct{}, 1),
	}, nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Start delivers due events in the background until ctx ends or Close:
// a batch at once, again at once after a full one, else after Wake or
// Poll. It does nothing after the first call or after Close.
func (d *Dispatcher) Start(ctx context.Context) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.done != nil {
		return
	}
	ctx, d.stop = context.WithCancel(ctx)
	d.done = make(chan struct{})
	go d.run(ctx)
}

// Wake makes the dispatcher look at the outbox now rather than at its next
// poll: called after a commit that wrote events. It never blocks.
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default: // a wake-up is pending already; it will see these events too
	}
}

// Close stops claiming events and waits for the requests in flight (each
// ends by its Timeout) to finish and be recorded. Safe to call more than
// once, and before Start.
func (d *Dispatcher) Close() {
	d.mu.Lock()
	d.closed = true
	stop, done := d.stop, d.done
	d.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
	d.client.CloseIdleConnections()
}

func (d *Dispatcher) run(ctx context.Context) {
	defer close(d.done)
	poll := time.NewTimer(d.opts.Poll)
	defer poll.Stop()
	for {
		n, err := d.DeliverDue(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			d.log.Error("webhook: looking for due events", "err", err)
		} else if n == d.opts.Batch {
			continue // a full batch: more may be due
		}
		poll.Reset(d.opts.Poll)
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-poll.C:
		}
	}
}

// DeliverDue claims one batch of due events, POSTs them side by side and
// records each outcome; it returns how many it claimed. Once claimed, an
// event is sent and recorded even if ctx ends meanwhile (its request has a
// deadline of its own): a shutdown does not count an attempt it cut short.
func (d *Dispatcher) DeliverDue(ctx context.Context) (int, error) {
	// The requests' deadline counts from before the claim, on the monotonic
	// clock: they end before the claim does, however slow the claim was.
	deadline := time.Now().Add(d.opts.Timeout)
	now := d.opts.Clock.Now()
	until := now.Add(d.opts.Timeout + claimSlack)
	cctx, cancel := context.WithTimeout(ctx, stmtTimeout)
	claimed, err := d.outbox.ClaimWebhooks(cctx, now, until, d.opts.Batch)
	cancel()
	if err != nil {
		return 0, fmt.Errorf("webhook: claim: %w", err)
	}
	base := context.WithoutCancel(ctx)
	var wg sync.WaitGroup
	for _, p := range claimed {
		wg.Go(func() { d.deliver(base, p, deadline, until) })
	}
	wg.Wait()
	return len(claimed), nil
}

// deliver sends one claimed event and records the outcome.
func (d *Dispatcher) deliver(ctx context.Context, p Pending, deadline, until time.Time) {
	reason, sendErr := d.post(ctx, p, deadline)
	ctx, cancel := context.WithTimeout(ctx, stmtTimeout)
	defer cancel()
	now := d.opts.Clock.Now()
	if sendErr == nil {
		d.opts.Metrics.Delivered.Inc()
		if err := d.outbox.MarkWebhookDelivered(ctx, p.ID, now); err != nil {
			d.log.Error("webhook: delivered but not recorded; it will be sent again", "event_id", p.EventID, "err", err)
		}
		return
	}
	d.opts.Metrics.Failed.WithLabelValues(reason).Inc()
	wait := backoff(p.Attempts+1, d.opts.MinBackoff, d.opts.MaxBackoff)
	d.log.Warn("webhook: attempt failed; will retry", "event_id", p.EventID, "kind", p.Kind,
		"attempts", p.Attempts+1, "retry_in", wait, "err", sendErr)
	if err := d.outbox.MarkWebhookFailed(ctx, p.ID, until, now.Add(wait), sendErr.Error()); err != nil {
		d.log.Error("webhook: failed attempt not recorded; the event is retried when its claim ends",
			"event_id", p.EventID, "err", err)
	}
}

// post sends p once. A failure comes with its reason label.
func (d *Dispatcher) post(ctx context.Context, p Pending, deadline time.Time) (string, error) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.opts.URL, bytes.NewReader(p.Body))
	if err != nil {
		return ReasonNetwork, fmt.Errorf("POST: %w", err)
	}
	// The time of sending, on the wall clock: the receiver bounds replays
	// by it, as SeatFlow does the payment callback's.
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "SeatFlow-Webhook")
	req.Header.Set(HeaderEventID, p.EventID)
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderSignature, Sign(d.opts.Secret, ts, p.Body))
	resp, err := d.client.Do(req)
	if err != nil {
		// The cause only: the url.Error around it quotes the URL, which may
		// carry credentials, into the log and last_error.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return ReasonTimeout, fmt.Errorf("POST: no answer within %v: %w", d.opts.Timeout, err)
		}
		return ReasonNetwork, fmt.Errorf("POST: %w", err)
	}
	defer resp.Body.Close()
	start, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return "", nil
	}
	return ReasonStatus, fmt.Errorf("POST: answered %d %q", resp.StatusCode, bytes.TrimSpace(start))
}

// backoff is the wait after an event's n-th failed attempt (n ≥ 1): min
// doubled n-1 times, at most max, drawn at random from the upper half of
// that. The jitter spreads the retries of events that failed together (the
// receiver down) instead of sending them back all at once; each wait is at
// least the one before it until the cap, as every half starts where the
// one before it ended.
func backoff(n int, minWait, maxWait time.Duration) time.Duration {
	d := minWait
	for i := 1; i < n && d < maxWait; i++ {
		d *= 2
	}
	d = min(d, maxWait)
	return d/2 + rand.N(d-d/2+1)
}
