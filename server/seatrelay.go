package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// relayPublishTimeout bounds a Publish: it runs on the engine's request
// path, and a seat map that misses a change heals when the browser
// reconnects, while a stuck order request does not.
const relayPublishTimeout = 500 * time.Millisecond

// RedisRelay is the SeatRelay of several instances sharing one Redis: every
// instance publishes its seat changes on one pub/sub channel and delivers
// what it receives there (its own changes included) to its SeatHub.
//
// Pub/sub is fire-and-forget: a change published while an instance's
// subscription is reconnecting does not reach that instance's browsers until
// they reconnect and get a fresh grid. That is acceptable for a live view
// whose truth is the database; nothing depends on the relay for
// correctness.
type RedisRelay struct {
	rdb     redis.UniversalClient
	channel string
	log     *slog.Logger

	mu     sync.Mutex
	pubsub *redis.PubSub // set by Start
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
	return &RedisRelay{rdb: rdb, channel: channel, log: logger}
}

// Publish implements SeatRelay.
func (r *RedisRelay) Publish(ctx context.Context, c SeatChange) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("seat relay: encode: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, relayPublishTimeout)
	defer cancel()
	if err := r.rdb.Publish(ctx, r.channel, b).Err(); err != nil {
		return fmt.Errorf("seat relay: publish on %s: %w", r.channel, err)
	}
	return nil
}

// Start subscribes and hands every change received to deliver (normally
// SeatHub.Deliver) until Close. It returns once Redis has confirmed the
// subscription, so no change published after Start is missed. The client
// resubscribes by itself after a lost connection.
func (r *RedisRelay) Start(ctx context.Context, deliver func(SeatChange)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pubsub != nil {
		return errors.New("seat relay: already started")
	}
	ps := r.rdb.Subscribe(ctx, r.channel)
	if _, err := ps.Receive(ctx); err != nil {
		_ = ps.Close()
		return fmt.Errorf("seat relay: subscribe to %s: %w", r.channel, err)
	}
	r.pubsub, r.done = ps, make(chan struct{})
	go r.receive(ps.Channel(), deliver)
	return nil
}

// receive runs until the subscription is closed (its channel closes).
func (r *RedisRelay) receive(msgs <-chan *redis.Message, deliver func(SeatChange)) {
	defer close(r.done)
	for m := range msgs {
		var c SeatChange
		if err := json.Unmarshal([]byte(m.Payload), &c); err != nil || c.ShowID <= 0 {
			// Not ours or not well formed: someone else's message on the
			// channel must not take down the live maps.
			r.log.Warn("seat relay: ignoring a malformed message", "channel", r.channel, "err", err)
			continue
		}
		deliver(c)
	}
}

// Close ends the subscription and waits for the receiving goroutine.
// Publish keeps working until the Redis client itself is closed, so the
// engine's last changes during shutdown still reach the other instances.
func (r *RedisRelay) Close() error {
	r.mu.Lock()
	ps, done := r.pubsub, r.done
	r.pubsub = nil
	r.mu.Unlock()
	if ps == nil {
		return nil
	}
	err := ps.Close()
	<-done
	if err != nil {
		return fmt.Errorf("seat relay: close subscription: %w", err)
	}
	return nil
}
