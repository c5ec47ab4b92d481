package server

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"seatflow/core"
)

// SeatChange is one seat-state change as the engine reports it. It is plain
// data (JSON-ready), so a relay can carry it between instances.
type SeatChange struct {
	ShowID  int64          `json:"show_id"`
	SeatIDs []string       `json:"seat_ids"`
	State   core.SeatState `json:"state"`
	OrderNo string         `json:"order_no,omitempty"`
}

// SeatRelay carries seat changes to every SeatFlow instance, this one
// included (e.g. Redis pub/sub on one channel). Publish is called on the
// engine's request path and must not wait long; the relay's receiving side
// hands each message it gets to SeatHub.Deliver.
type SeatRelay interface {
	Publish(ctx context.Context, c SeatChange) error
}

// subscriberBuffer is how many changes a subscriber may fall behind before
// it is dropped. A dropped stream ends, the browser reconnects, and the new
// stream starts with the whole grid, so dropping loses nothing.
const subscriberBuffer = 256

// SeatHub fans seat changes out to the console's live seat maps. It is the
// engine's core.Notifier. Without a relay it delivers in-process; with one,
// SeatsChanged publishes and the change comes back through Deliver on every
// instance, so browsers attached to any instance see every change.
type SeatHub struct {
	relay SeatRelay
	log   *slog.Logger

	// epoch and versions name what a seat map was drawn at (Version): a
	// show's count of changes delivered and of streams the hub ended,
	// which a restarted process (another epoch) never repeats.
	epoch string

	mu       sync.Mutex
	subs     map[int64]map[*SeatSubscription]struct{}
	versions map[int64]uint64
	closed   bool
}

var _ core.Notifier = (*SeatHub)(nil)

// NewSeatHub returns a hub; relay may be nil (one instance).
func NewSeatHub(relay SeatRelay, logger *slog.Logger) *SeatHub {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &SeatHub{relay: relay, log: logger, epoch: strconv.FormatInt(time.Now().UnixNano(), 36),
		subs: map[int64]map[*SeatSubscription]struct{}{}, versions: map[int64]uint64{}}
}

// Version names the seat changes of showID this hub has delivered, and
// the streams of it the hub has ended, so far.
// A page that reads it before it reads the seats, and a stream whose
// subscription (SeatSubscription.Version) has the same, saw the same
// changes: the stream need not send the whole grid again.
func (h *SeatHub) Version(showID int64) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.versionLocked(showID)
}

func (h *SeatHub) versionLocked(showID int64) string {
	return h.epoch + "." + strconv.FormatUint(h.versions[showID], 10)
}

// SeatsChanged implements core.Notifier. It never blocks on a subscriber.
func (h *SeatHub) SeatsChanged(showID int64, seatIDs []string, state core.SeatState, orderNo string) {
	if len(seatIDs) == 0 {
		return
	}
	c := SeatChange{ShowID: showID, SeatIDs: slices.Clone(seatIDs), State: state, OrderNo: orderNo}
	if h.relay != nil {
		err := h.relay.Publish(context.Background(), c)
		if err == nil {
			return
		}
		// Other instances miss this change until their browsers reconnect;
		// this instance's maps at least stay live.
		h.log.Warn("seat hub: relay publish failed; delivering locally only", "show_id", showID, "err", err)
	}
	h.Deliver(c)
}

// AllShows subscribes to the changes of every show: the console's live
// lists and pages, which follow orders of any show (see liveEvents).
const AllShows int64 = 0

// Deliver hands c to this instance's subscribers of its show and of
// AllShows. A subscriber whose buffer is full is dropped (its channel
// closed) instead of waited for.
func (h *SeatHub) Deliver(c SeatChange) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.versions[c.ShowID]++
	for _, id := range []int64{c.ShowID, AllShows} {
		for s := range h.subs[id] {
			select {
			case s.ch <- c:
			default:
				h.log.Warn("seat hub: subscriber too slow; dropping it", "show_id", id)
				h.removeLocked(s)
			}
		}
	}
}

// SeatSubscription receives the changes of one show on C until it is
// closed, by Close, by the hub when it falls behind, or by SeatHub.Close.
type SeatSubscription struct {
	C <-chan SeatChange
	// Version is the show's Version when the subscription began: every
	// later change comes on C.
	Version string

	ch     chan SeatChange
	showID int64
	hub    *SeatHub
}

// Subscribe starts receiving showID's changes, or every show's with
// AllShows. On a closed hub the
// subscription's channel is closed at once.
func (h *SeatHub) Subscribe(showID int64) *SeatSubscription {
	ch := make(chan SeatChange, subscriberBuffer)
	s := &SeatSubscription{C: ch, ch: ch, showID: showID, hub: h}
	h.mu.Lock()
	defer h.mu.Unlock()
	s.Version = h.versionLocked(showID)
	if h.closed {
		close(ch)
		return s
	}
	if h.subs[showID] == nil {
		h.subs[showID] = map[*SeatSubscription]struct{}{}
	}
	h.subs[showID][s] = struct{}{}
	return s
}

// Close stops the subscription; closing twice is harmless.
func (s *SeatSubscription) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.unsubscribeLocked(s) // its browser left: nothing was missed
}

// removeLocked ends s for the hub (too slow, shutting down) and moves its
// show's version: the stream may have missed changes, and its browser
// reconnects with the old version and must get the grid.
func (h *SeatHub) removeLocked(s *SeatSubscription) {
	if h.unsubscribeLocked(s) {
		h.versions[s.showID]++
	}
}

// unsubscribeLocked drops s; false if it was gone already.
func (h *SeatHub) unsubscribeLocked(s *SeatSubscription) bool {
	set := h.subs[s.showID]
	if _, ok := set[s]; !ok {
		return false
	}
	delete(set, s)
	close(s.ch)
	if len(set) == 0 {
		delete(h.subs, s.showID)
	}
	return true
}

// Resync ends every subscription but keeps the hub open: each seat stream
// finishes, its browser reconnects and starts again from the whole grid.
// The relay calls it when changes may have been lost (see RedisRelay).
func (h *SeatHub) Resync() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.removeAllLocked()
}

// Close ends every subscription, so open event streams finish and a server
// shutdown does not wait for them; later subscriptions end at once.
func (h *SeatHub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	h.removeAllLocked()
}

func (h *SeatHub) removeAllLocked() {
	for _, set := range h.subs {
		for s := range set {
			h.removeLocked(s)
		}
	}
}
