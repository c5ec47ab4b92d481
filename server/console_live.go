package server

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/labstack/echo/v4"

	"seatflow/web"
)

// liveHeartbeat is how often a stream says it is alive (a "ping" event).
// The page's script counts itself stale after missing three (live.js), so
// a hung server or a dead proxy shows within seconds, not at the next
// keep-alive; the page learns the interval from the layout.
const liveHeartbeat = web.LiveHeartbeat

// liveChange is the "change" event of the console's streams: which seats
// of which show went to which state, and for whose order. The holds list,
// an open seat panel, an order page and the dashboard read it (live.js) to
// know when to fetch themselves again; a change relayed from another
// instance reaches them the same way as the seat maps' (SeatHub.Deliver).
type liveChange struct {
	ShowID  int64    `json:"show"`
	SeatIDs []string `json:"seats"`
	State   string   `json:"state"`
	OrderNo string   `json:"order,omitempty"`
}

// writeChange sends ch as one "change" event.
func writeChange(w *echo.Response, ch SeatChange) error {
	b, err := json.Marshal(liveChange{ShowID: ch.ShowID, SeatIDs: ch.SeatIDs, State: ch.State.String(), OrderNo: ch.OrderNo})
	if err != nil {
		return fmt.Errorf("encode change event: %w", err)
	}
	return writeEvent(w, "change", string(b))
}

// liveEvents is the event stream of the console's pages without a seat
// map: the "change" event of every show's seat changes and the heartbeat.
// It ends like a seat stream does (seatEvents), and when the hub resyncs:
// the browser reconnects and its parts fetch themselves again, which covers
// whatever the gap swallowed.
func (cn *console) liveEvents(c echo.Context) error {
	sess := sessionOf(c)
	ctx, done := cn.streams.open(c.Request().Context(), sess)
	defer done()
	sub := cn.Hub.Subscribe(AllShows)
	defer sub.Close()
	w := cn.startStream(c, "live stream")
	// Reconnect after 1 s rather than the browser's 3 s: a stream the hub
	// ends on purpose (a resync) should not grey the page out.
	if _, err := io.WriteString(w, "retry: 1000\n\n"); err != nil {
		return nil
	}
	w.Flush()
	return cn.streamChanges(ctx, w, sess, sub, func(ch SeatChange) error { return writeChange(w, ch) })
}
