package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core/gather"
)

// relayPublishTimeout bounds a Publish: it runs on the engine's request
// path, and a seat map that misses a change heals when the browser
// reconnects, while a stuck order request does not.
const relayPublishTimeout = 500 * time.Millisecond

// Health of the subscription. A master that hangs, or that a failover
// leaves behind, keeps our connection open and accepts what we write into
// its socket buffer, so go-redis's own health check (a PING whose write
// succeeds) never notices and the subscription stays on it, deaf. Only a
// missing reply shows it: after relayQuietInterval without anything from
// Redis the relay sends a PING, and when not even its PONG comes back within
// another interval it subscribes afresh, which finds the master of now.
const (
	relayQuietInterval      = time.Second
	relaySubscribeTimeout   = 2 * time.Second
	relayResubscribeBackoff = time.Second
)

// RedisRelay is the SeatRelay of several instances sharing one Redis: every
// instance publishes its seat changes on one pub/sub channel and delivers
// what it receives there (its own changes included) to its SeatHub.
//
// Pub/sub is fire-and-forget: a change published while an instance's
// subscription is down (a lost connection, a failover) never reaches that
// instance. So after every re-subscription the relay asks its hub to resync
// (SeatHub.Resync): the open seat streams end, and the browsers reconnect
// and read the whole grid again, which has every change the gap swallowed.
// Resyncing once the new subscription is confirmed, not when the old one is
// found dead, is what makes that complete: a grid read earlier would miss
// the changes made before the relay listens again. Until then a
// seat map may lag; nothing depends on the relay for correctness (its
// truth is the database).
type RedisRelay struct {
	rdb       redis.UniversalClient
	channel   string
	log       *slog.Logger
	publishes *gather.Batcher[*publishCall]

	mu     sync.Mutex
	pubsub *redis.PubSub // set by Start, replaced on a re-subscription
	stop   chan struct{} // closed by Close
	done   chan struct{} // closed when the receiving goroutine ends
}

var _ SeatRelay = (*RedisRelay)(nil)

// SeatChannel names the pub/sub channel of the Redis database db. Pub/sub
// ignores SELECT, so two deployments on different databases of one Redis
// must not share a channel; the database number keeps them apart.
func SeatChannel(db int) string { return fmt.Sprintf("seatflow:%d:seats", db) }

// NewRedisRelay returns a relay on channel; it publishes at once and
// receives after Start.
func NewRedisRelay(rdb redis.UniversalClient, channel string, logger *slog.Logger) *RedisRelay {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &RedisRelay{rdb: rdb, channel: channel, log: logger}
	r.publishes = gather.New(relayPublishRunners, relayPublishMaxBatch, r.runPublishes)
	return r
}

// Publish implements SeatRelay.
func (r *RedisRelay) Publish(ctx context.Context, c SeatChange) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("seat relay: encode: %w", err)
	}
	p := &publishCall{msg: b}
	r.publishes.Do(ctx, p)
	if p.err != nil {
		return fmt.Errorf("seat relay: publish on %s: %w", r.channel, p.err)
	}
	return nil
}

// Publishes that arrive together (every placement publishes its seats) go
// out as one pipeline: one round trip for all instead of one each.
const (
	relayPublishRunners  = 2
	relayPublishMaxBatch = 64
)

type publishCall struct {
	msg []byte
	err error
}

func (r *RedisRelay) runPublishes(ctx context.Context, batch []*publishCall) {
	ctx, cancel := context.WithTimeout(ctx, relayPublishTimeout)
	defer cancel()
	cmds := make([]*redis.IntCmd, len(batch))
	// Each command carries its own error; Pipelined's is the first of them.
	_, _ = r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range batch {
			cmds[i] = p.Publish(ctx, r.channel, c.msg)
		}
		return nil
	})
	for i, c := range batch {
		c.err = cmds[i].Err()
	}
}

// Start subscribes and hands every change received to deliver (normally
// SeatHub.Deliver) until Close; after every re-subscription it calls resync
// (normally SeatHub.Resync). It returns once Redis has confirmed the
// subscription, so no change published after Start is missed.
func (r *RedisRelay) Start(ctx context.Context, deliver func(SeatChange), resync func()) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pubsub != nil {
		return errors.New("seat relay: already started")
	}
	ps, err := r.subscribe(ctx)
	if err != nil {
		return err
	}
	r.pubsub, r.stop, r.done = ps, make(chan struct{}), make(chan struct{})
	go r.receive(ps, r.stop, r.done, deliver, resync)
	return nil
}

// subscribe returns a subscription Redis has confirmed.
func (r *RedisRelay) subscribe(ctx context.Context) (*redis.PubSub, error) {
	ps := r.rdb.Subscribe(ctx, r.channel)
	if _, err := ps.Receive(ctx); err != nil {
		_ = ps.Close()
		return nil, fmt.Errorf("seat relay: subscribe to %s: %w", r.channel, err)
	}
	return ps, nil
}

// receive runs until Close. It reads the subscription itself rather than
// through PubSub.Channel, whose reader waits without a deadline and hides
// both the PONGs and go-redis's own re-subscriptions.
func (r *RedisRelay) receive(ps *redis.PubSub, stop, done chan struct{}, deliver func(SeatChange), resync func()) {
	defer close(done)
	ctx := context.Background()
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(ctx, relayQuietInterval)
		var netErr net.Error
		switch {
		case errors.Is(err, redis.ErrClosed):
			return // Close closed it
		case errors.As(err, &netErr) && netErr.Timeout() && !pinged:
			// Quiet: ask for a sign of life. A failed write makes go-redis
			// reconnect, which the next Receive reports as a Subscription.
			_ = ps.Ping(ctx)
			pinged = true
		case errors.As(err, &netErr) && netErr.Timeout():
			r.log.Warn("seat relay: no answer from Redis; subscribing again", "channel", r.channel)
			if ps = r.resubscribe(ps, stop); ps == nil {
				return
			}
			resync()
			pinged = false
		case err != nil:
			// A broken connection: go-redis reconnects and subscribes again
			// by itself (reported by a Subscription below); pause so a Redis
			// that is down is not hammered.
			pinged = false
			select {
			case <-stop:
				return
			case <-time.After(relayResubscribeBackoff):
			}
		default:
			pinged = false
			switch m := msg.(type) {
			case *redis.Subscription:
				if m.Kind == "subscribe" {
					r.log.Warn("seat relay: subscribed again after a lost connection", "channel", r.channel)
					resync()
				}
			case *redis.Message:
				r.handle(m, deliver)
			}
		}
	}
}

// resubscribe replaces old by a new confirmed subscription, trying until it
// gets one; it returns nil when Close comes first.
func (r *RedisRelay) resubscribe(old *redis.PubSub, stop chan struct{}) *redis.PubSub {
	_ = old.Close()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), relaySubscribeTimeout)
		ps, err := r.subscribe(ctx)
		cancel()
		if err == nil {
			r.mu.Lock()
			defer r.mu.Unlock()
			select {
			case <-stop:
				_ = ps.Close()
				return nil
			default:
			}
			r.pubsub = ps
			return ps
		}
		r.log.Warn("seat relay: cannot subscribe again; retrying", "channel", r.channel, "err", err)
		select {
		case <-stop:
			return nil
		case <-time.After(relayResubscribeBackoff):
		}
	}
}

func (r *RedisRelay) handle(m *redis.Message, deliver func(SeatChange)) {
	var c SeatChange
	if err := json.Unmarshal([]byte(m.Payload), &c); err != nil || c.ShowID <= 0 {
		// Not ours or not well formed: someone else's message on the
		// channel must not take down the live maps.
		r.log.Warn("seat relay: ignoring a malformed message", "channel", r.channel, "err", err)
		return
	}
	deliver(c)
}

// Close ends the subscription and waits for the receiving goroutine.
// Publish keeps working until the Redis client itself is closed, so the
// engine's last changes during shutdown still reach the other instances.
func (r *RedisRelay) Close() error {
	r.mu.Lock()
	ps, stop, done := r.pubsub, r.stop, r.done
	r.pubsub = nil
	if ps != nil {
		close(stop)
	}
	r.mu.Unlock()
	if ps == nil {
		return nil
	}
	err := ps.Close()
	<-done
	if err != nil && !errors.Is(err, redis.ErrClosed) {
		return fmt.Errorf("seat relay: close subscription: %w", err)
	}
	return nil
}
