package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/admission"
	"seatflow/web"
)

// The console's side of the waiting room (core/admission/room.go): a page
// per show with the queue's figures and its controller's signal, the
// estimated wait at a position, and for managers the settings (the same
// Room.Configure as PUT /api/v1/shows/{id}/queue), pause and resume, each
// audited. Bad input comes back as a message on the page, never a 500.

// queueRoutes mounts the queue pages; a console without a Room (handler
// tests) has none, as the API has no queue routes then.
func (cn *console) queueRoutes(g *echo.Group, view echo.MiddlewareFunc) {
	if cn.Room == nil {
		return
	}
	manage := cn.requireRole(access.ActShows)
	g.GET("/shows/:id/queue", cn.queuePage, view)
	g.GET("/shows/:id/queue/live", cn.queueLive, view)
	g.POST("/shows/:id/queue", cn.configureQueue, manage)
	g.POST("/shows/:id/queue/pause", cn.pauseQueue, manage)
	g.POST("/shows/:id/queue/resume", cn.resumeQueue, manage)
}

// queueData reads the show, its queue from the seat store (a queue never
// configured is a disabled one with the default settings) and this
// instance's last step of it; the settings form holds the settings.
func (cn *console) queueData(c echo.Context, p web.Page) (web.QueueData, error) {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return web.QueueData{}, echo.ErrNotFound
	}
	ctx := c.Request().Context()
	show, err := cn.Engine.Store().Show(ctx, id)
	if err != nil {
		return web.QueueData{}, err
	}
	st, err := cn.queueStatus(ctx, id)
	if err != nil {
		return web.QueueData{}, err
	}
	d := web.QueueData{Show: show, Status: st}
	// A queue enabled here and not stepped since has a snapshot with no
	// controller reading yet: shown as none rather than a rate of 0.
	snap, ok := cn.Room.Snapshot(id)
	d.Snap, d.HasSnap = snap, ok && !snap.At.IsZero()
	d.Form = web.QueueForm{Enabled: st.Enabled, Mode: string(st.Mode), OpensAt: p.DateTimeLocal(st.OpensAt),
		Window: strconv.FormatInt(int64(st.Window/time.Second), 10)}
	return d, nil
}

// queueStatus is the show's queue, or a disabled one with the defaults.
func (cn *console) queueStatus(ctx context.Context, show int64) (admission.Status, error) {
	st, err := cn.Room.Store().Status(ctx, show)
	if errors.Is(err, admission.ErrNoQueue) {
		return admission.Status{Settings: admission.Settings{Mode: admission.ModeAlways, Window: cn.queueWindow()}}, nil
	}
	return st, err
}

// queueWindow is SEATFLOW_QUEUE_WINDOW, the window of a queue whose
// settings do not name one.
func (cn *console) queueWindow() time.Duration {
	if cn.QueueWindow > 0 {
		return cn.QueueWindow
	}
	return admission.DefaultWindow
}

// queuePage shows the queue; ?position=N adds the estimated wait there.
func (cn *console) queuePage(c echo.Context) error {
	p := cn.page(c, "queue.title", web.NavShows)
	d, err := cn.queueData(c, p)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if d.Position = strings.TrimSpace(c.QueryParam("position")); d.Position != "" {
		pos, err := strconv.ParseInt(d.Position, 10, 64)
		if err != nil || pos < 1 {
			d.Error, status = "queue.error.position", http.StatusUnprocessableEntity
		} else {
			d.Estimate = -1
			if !d.Status.Paused && d.HasSnap {
				d.Estimate = d.Snap.EstimatedWait(pos)
			}
		}
	}
	return render(c, status, web.QueuePage(p, d))
}

// queueLive is the page's live part alone, for htmx's polling.
func (cn *console) queueLive(c echo.Context) error {
	p := cn.page(c, "queue.title", web.NavShows)
	d, err := cn.queueData(c, p)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.QueueLive(p, d))
}

// configureQueue applies the settings form. Pausing is its own action, so
// the form keeps whatever pause the queue is in.
func (cn *console) configureQueue(c echo.Context) error {
	p := cn.page(c, "queue.title", web.NavShows)
	d, err := cn.queueData(c, p)
	if err != nil {
		return err
	}
	d.Form = web.QueueForm{Enabled: c.FormValue("enabled") != "", Mode: c.FormValue("mode"),
		OpensAt: strings.TrimSpace(c.FormValue("opens_at")), Window: strings.TrimSpace(c.FormValue("window_seconds"))}
	set, problem := queueSettingsFrom(d.Form, p.Loc, cn.queueWindow())
	if problem != "" {
		d.Error = problem
		return render(c, http.StatusUnprocessableEntity, web.QueuePage(p, d))
	}
	set.Paused = d.Status.Paused
	if _, err := cn.Room.Configure(c.Request().Context(), d.Show.ID, set); err != nil {
		return err
	}
	cn.audit(c, queueSettingsAudit(d.Show.ID, set))
	return c.Redirect(http.StatusSeeOther, web.URL(fmt.Sprintf("/shows/%d/queue?msg=queue_saved", d.Show.ID)))
}

// queueSettingsFrom reads the settings form, checked as the API checks
// its body; problem is the catalog key of what is wrong, or "".
func queueSettingsFrom(f web.QueueForm, loc *time.Location, window time.Duration) (set admission.Settings, problem string) {
	set = admission.Settings{Enabled: f.Enabled, Mode: admission.Mode(f.Mode), Window: window}
	if !slices.Contains(web.QueueModes, set.Mode) {
		return set, "queue.error.mode"
	}
	if f.OpensAt != "" {
		t, err := time.ParseInLocation(web.DateTimeLocalLayout, f.OpensAt, loc)
		if err != nil {
			// A browser sends seconds when the input's step asks for them.
			if t, err = time.ParseInLocation(web.DateTimeLocalLayout+":05", f.OpensAt, loc); err != nil {
				return set, "queue.error.opens_at"
			}
		}
		set.OpensAt = t
	}
	if f.Window != "" {
		secs, err := strconv.ParseInt(f.Window, 10, 64)
		window, ok := queueWindow(secs)
		if err != nil || !ok {
			return set, "queue.error.window"
		}
		set.Window = window
	}
	return set, ""
}

func (cn *console) pauseQueue(c echo.Context) error  { return cn.setQueuePaused(c, true) }
func (cn *console) resumeQueue(c echo.Context) error { return cn.setQueuePaused(c, false) }

// setQueuePaused stops or restarts admissions of an enabled queue; joins
// and polls go on either way.
func (cn *console) setQueuePaused(c echo.Context, paused bool) error {
	p := cn.page(c, "queue.title", web.NavShows)
	d, err := cn.queueData(c, p)
	if err != nil {
		return err
	}
	if !d.Status.Enabled {
		d.Error = "queue.error.not_enabled"
		return render(c, http.StatusUnprocessableEntity, web.QueuePage(p, d))
	}
	set := d.Status.Settings
	set.Paused = paused
	if _, err := cn.Room.Configure(c.Request().Context(), d.Show.ID, set); err != nil {
		return err
	}
	action, msg := admission.AuditQueuePause, "queue_paused"
	if !paused {
		action, msg = admission.AuditQueueResume, "queue_resumed"
	}
	cn.audit(c, core.AuditEntry{Action: action, Target: "show:" + d.ID()})
	return c.Redirect(http.StatusSeeOther, web.URL(fmt.Sprintf("/shows/%d/queue?msg=%s", d.Show.ID, msg)))
}

// queueRows are the dashboard card's rows: every queue this instance's
// last step found enabled, by show id, named by its show.
func (cn *console) queueRows(ctx context.Context) []web.QueueRow {
	if cn.Room == nil {
		return nil
	}
	snaps := cn.Room.Snapshots()
	slices.SortFunc(snaps, func(a, b admission.Snapshot) int { return cmp.Compare(a.Show, b.Show) })
	rows := make([]web.QueueRow, 0, len(snaps))
	for _, s := range snaps {
		r := web.QueueRow{Show: s.Show, Name: "#" + strconv.FormatInt(s.Show, 10), Waiting: s.Waiting(),
			Admitted: s.Status.Admitted, Rate: s.Controller.Rate, Reason: s.Controller.Reason, Paused: s.Status.Paused,
			Stepped: !s.At.IsZero()}
		// A name that cannot be read leaves the number: the card still
		// links to the queue, and the rest of the dashboard is worth more.
		if show, err := cn.Engine.Store().Show(ctx, s.Show); err == nil {
			r.Name = show.Name
		} else {
			cn.Logger.WarnContext(ctx, "console: reading a queued show", "show", s.Show, "err", err)
		}
		rows = append(rows, r)
	}
	return rows
}
