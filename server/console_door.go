package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/checkin"
	"seatflow/web"
)

// doorRoutes mounts the gate's scan page, the only pages the door role
// reaches (and the sign-out): a scan, the undo of the last one, and the
// door counts of its show.
func (cn *console) doorRoutes(g *echo.Group) {
	door := cn.requireRole(access.ActCheckin)
	g.GET("/door", cn.doorPage, door)
	g.POST("/door", cn.doorScan, door)
	g.POST("/door/undo", cn.doorUndo, door)
	g.GET("/door/counts", cn.doorCounts, door)
	// Offline gates (static/door.js): the ticket list, the scans made
	// offline, and a ping that tells the gate it is online.
	g.GET("/door/list", cn.doorList, door)
	g.POST("/door/sync", cn.doorSync, door)
	g.GET("/door/ping", cn.doorPing, door)
}

func (cn *console) doorPage(c echo.Context) error {
	return cn.renderDoor(c, web.DoorData{Gate: c.QueryParam("gate")})
}

// renderDoor renders the scan page with the shows a gate may download
// the ticket list of: those not cancelled that start from a day ago on.
func (cn *console) renderDoor(c echo.Context, d web.DoorData) error {
	shows, err := cn.Engine.Shows(c.Request().Context())
	if err != nil {
		return err
	}
	since := cn.Clock.Now().Add(-doorShowsSince)
	for _, sh := range shows {
		if sh.Status != core.ShowCancelled && sh.StartsAt.After(since) {
			d.Shows = append(d.Shows, sh)
		}
	}
	return render(c, http.StatusOK, web.DoorPage(cn.page(c, "door.title", web.NavDoor), d))
}

// doorShowsSince is how long after its start a show's list stays on offer.
const doorShowsSince = 24 * time.Hour

// doorList is a show's ticket list for the gate's browser (checkin.List).
func (cn *console) doorList(c echo.Context) error {
	show, err := positiveID(c.QueryParam("show"))
	if err != nil {
		return core.Invalidf("show must be a positive integer")
	}
	return ticketList(c, cn.Engine, cn.Checkins, show)
}

type doorSyncRequest struct {
	Gate  string                `json:"gate"`
	Scans []checkin.OfflineScan `json:"scans"`
}

// doorSync records the gate's offline scans as the staff member's and
// answers each (checkin.Desk.Sync) as JSON; door.js drops those answered.
func (cn *console) doorSync(c echo.Context) error {
	var req doorSyncRequest
	if err := json.NewDecoder(c.Request().Body).Decode(&req); err != nil {
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			return echo.ErrStatusRequestEntityTooLarge
		}
		return core.Invalidf("sync: a JSON body of gate and scans: %v", err)
	}
	res, err := cn.Checkins.Sync(c.Request().Context(), checkin.SyncRequest{Gate: req.Gate,
		Actor: core.ActorStaffPrefix + sessionOf(c).staff.Username, Scans: req.Scans})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"results": res})
}

// doorSyncBodyLimit fits checkin.MaxSyncScans scans of up to 10 seats
// each (console_limits.go applies it).
const doorSyncBodyLimit = 256 << 10

func (cn *console) doorPing(c echo.Context) error { return c.NoContent(http.StatusNoContent) }

// doorScan admits the scanned code at the form's gate and shows the answer;
// a refusal is an answer too (200), only bad input and failures are errors.
func (cn *console) doorScan(c echo.Context) error {
	s := sessionOf(c)
	ctx := c.Request().Context()
	d := web.DoorData{Gate: c.FormValue("gate"), Code: c.FormValue("code")}
	p := cn.page(c, "door.title", web.NavDoor)
	a, err := cn.Checkins.Admit(ctx, checkin.Request{Code: d.Code, Gate: d.Gate,
		Actor: core.ActorStaffPrefix + s.staff.Username, ScanID: c.FormValue("scan_id")})
	var ce *core.Error
	var show int64
	switch {
	case err == nil:
		d.Result, d.Seats, d.Count, d.Of = checkin.ResultAdmitted, a.Seats, a.AdmittedCount, len(a.Order.SeatIDs)
		show = a.Order.ShowID
	case errors.Is(err, checkin.ErrAlreadyCheckedIn), errors.Is(err, checkin.ErrNotValid):
		errors.As(err, &ce)
		r := ce.Detail.(*checkin.Refusal)
		d.Result, d.Reason, d.Seats, show = ce.Code, r.Reason, r.Seats, r.ShowID
		if r.First != nil {
			d.FirstAt, d.FirstGate, d.FirstBy = p.Time(r.First.At), r.First.Gate, r.First.By
		}
	default:
		return err
	}
	if err := cn.doorCountsOf(ctx, show, &d); err != nil {
		return err
	}
	return cn.renderDoor(c, d)
}

// doorUndo undoes the last scan's admission of its seats (a mistake at
// the gate), audited as the staff member's. Nothing to undo (sent twice,
// undone elsewhere, an unknown code) is said on the page.
func (cn *console) doorUndo(c echo.Context) error {
	ctx := c.Request().Context()
	d := web.DoorData{Gate: c.FormValue("gate")}
	form, err := c.FormParams()
	if err != nil {
		return err
	}
	undone, err := cn.Checkins.Undo(ctx, c.FormValue("code"), "", form["seat"], staffAction(c))
	switch {
	case errors.Is(err, checkin.ErrNotCheckedIn), errors.Is(err, core.ErrOrderNotFound):
		d.Error = "door.nothing_to_undo"
		return cn.renderDoor(c, d)
	case err != nil:
		return err
	}
	var show int64
	for _, t := range undone {
		d.Undone, show = append(d.Undone, t.SeatID), t.ShowID
	}
	if err := cn.doorCountsOf(ctx, show, &d); err != nil {
		return err
	}
	return cn.renderDoor(c, d)
}

// doorCounts is the door counts part of the scan page, polled.
func (cn *console) doorCounts(c echo.Context) error {
	show, err := positiveID(c.QueryParam("show"))
	if err != nil {
		return core.Invalidf("show must be a positive integer")
	}
	var d web.DoorData
	if err := cn.doorCountsOf(c.Request().Context(), show, &d); err != nil {
		return err
	}
	return render(c, http.StatusOK, web.DoorCounts(cn.page(c, "door.title", web.NavDoor), d))
}

// doorCountsOf reads the door counts of show (none when 0) into d.
func (cn *console) doorCountsOf(ctx context.Context, show int64, d *web.DoorData) error {
	if show == 0 {
		return nil
	}
	sh, err := cn.Engine.Store().Show(ctx, show)
	if err != nil {
		return err
	}
	if d.Counts, err = cn.Checkins.Counts(ctx, show); err != nil {
		return err
	}
	d.ShowName = sh.Name
	return nil
}
