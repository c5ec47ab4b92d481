package web

import (
	"strconv"
	"strings"
	"time"

	"seatflow/core"
)

// Live parts. An element with data-live is a live part of its page
// (static/live.js): it is greyed out and made inert while the page's event
// stream is down, and fetched again (from data-live-src, else the page's
// own address, swapping in the element of the same id) when a "change"
// event matches one of its keys, when the stream comes back, and every
// data-live-every milliseconds. The keys of a change: "*", "show:<id>",
// "order:<no>" and "seat:<show>:<seat>" for each of its seats. An empty
// data-live is greyed out only (the seat map, which its own stream redraws).

// LiveHeartbeat is how often the console's event streams send a "ping".
const LiveHeartbeat = 5 * time.Second

// LiveAny is the key every change matches.
const LiveAny = "*"

// SeatKey is the live key of one seat.
func SeatKey(showID int64, seatID string) string {
	return "seat:" + strconv.FormatInt(showID, 10) + ":" + seatID
}

// OrderLiveKeys are an order page's keys: the order and each of its seats
// (a release names the seats but not the order).
func OrderLiveKeys(o core.Order) string {
	keys := []string{"order:" + o.OrderNo}
	for _, s := range o.SeatIDs {
		keys = append(keys, SeatKey(o.ShowID, s))
	}
	return strings.Join(keys, " ")
}
