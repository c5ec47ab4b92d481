package seats

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"seatflow/core"
)

// encode writes a hold as the scripts store it: "state|orderNo|userID|lockMs".
// A zero LockedAt is stored as 0.
func encode(h core.SeatHold) (string, error) {
	if h.State != core.SeatLocked && h.State != core.SeatSold {
		return "", core.Invalidf("seat %q: state %v cannot be stored", h.SeatID, h.State)
	}
	if err := checkOrderNo(h.OrderNo); err != nil {
		return "", err
	}
	var ms int64
	if !h.LockedAt.IsZero() {
		ms = h.LockedAt.UnixMilli()
	}
	return fmt.Sprintf("%d|%s|%d|%d", h.State, h.OrderNo, h.UserID, ms), nil
}

// decode is the inverse of encode; LockedAt comes back in UTC at millisecond
// precision, zero when stored as 0.
func decode(seatID, v string) (core.SeatHold, error) {
	parts := strings.Split(v, "|")
	if len(parts) != 4 {
		return core.SeatHold{}, fmt.Errorf("seat %q: malformed value %q", seatID, v)
	}
	state, err1 := strconv.Atoi(parts[0])
	user, err2 := strconv.ParseInt(parts[2], 10, 64)
	ms, err3 := strconv.ParseInt(parts[3], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || ms < 0 ||
		(core.SeatState(state) != core.SeatLocked && core.SeatState(state) != core.SeatSold) {
		return core.SeatHold{}, fmt.Errorf("seat %q: malformed value %q", seatID, v)
	}
	h := core.SeatHold{SeatID: seatID, State: core.SeatState(state), OrderNo: parts[1], UserID: user}
	if ms != 0 {
		h.LockedAt = time.UnixMilli(ms).UTC()
	}
	return h, nil
}
