package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/web"
)

// seatEvents streams a show's seat changes as server-sent events named
// "seats", each holding seat buttons marked hx-swap-oob. It subscribes
// before it reads the grid and sends the whole grid first, so no change
// falls between the page and the stream, unless the page's ?since= is the
// hub's version of the show at the subscription: then the page already
// has every change before it, and sending 20,000 seats again would only
// freeze the browser while it swaps them in. It ends when the browser goes,
// when the hub drops it for falling behind (the browser reconnects and
// gets a fresh grid), when the hub closes at shutdown, when its session
// is logged out, ended from the sessions or staff page, or its account
// disabled, and at the first keep-alive after its session expired or went
// idle (keep-alives do not count as use: an open tab alone does not keep a
// session alive).
func (cn *console) seatEvents(c echo.Context) error {
	sess := sessionOf(c)
	ctx, done := cn.streams.open(c.Request().Context(), sess)
	defer done()
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return echo.ErrNotFound
	}
	sub := cn.Hub.Subscribe(id)
	defer sub.Close()
	p := cn.page(c, "shows.title", web.NavShows)
	var grid templ.Component
	if c.QueryParam("since") != sub.Version {
		d, err := cn.seatMapData(c)
		if err != nil {
			return err
		}
		grid = web.SeatGrid(p, d, true)
	} else if _, err := cn.Engine.Store().Show(ctx, id); err != nil {
		return err
	}

	w := cn.startStream(c, "seat stream")
	if grid == nil {
		w.Flush() // the browser counts the stream open once it has the headers
	} else if err := writeSSE(ctx, w, grid); err != nil {
		return streamErr(ctx, err)
	}
	return cn.streamChanges(ctx, w, sess, sub, func(ch SeatChange) error {
		if err := writeSSE(ctx, w, seatButtons(ch)); err != nil {
			return err
		}
		return writeChange(w, ch)
	})
}

// startStream sends an event stream's headers.
func (cn *console) startStream(c echo.Context, what string) *echo.Response {
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no") // no proxy buffering of the stream
	cn.liftWriteDeadline(c, what)             // the stream outlives the server's WriteTimeout by design
	w.WriteHeader(http.StatusOK)
	return w
}

// streamChanges runs an open stream until it ends (see seatEvents): send
// writes each change of sub, a "ping" event every liveHeartbeat tells the
// page's script that the stream is alive (live.js greys the page out when
// they stop), and each keep-alive re-checks the session.
func (cn *console) streamChanges(ctx context.Context, w *echo.Response, sess *staffSession, sub *SeatSubscription, send func(SeatChange) error) error {
	keepAlive, stop := cn.keepAlive()
	defer stop()
	heartbeat := time.NewTicker(liveHeartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ch, ok := <-sub.C:
			// A session ended meanwhile gets no more events, even if
			// the change came in at the same moment.
			if !ok || ctx.Err() != nil {
				return nil
			}
			if err := send(ch); err != nil {
				return streamErr(ctx, err)
			}
		case <-heartbeat.C:
			if err := writeEvent(w, "ping", ""); err != nil {
				return streamErr(ctx, err)
			}
		case <-keepAlive:
			if _, _, err := cn.liveSession(ctx, sess.session.TokenHash); err != nil {
				return streamErr(ctx, ignoreNoSession(err))
			}
			// A comment line: keeps proxies from closing an idle stream.
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
			w.Flush()
		}
	}
}

// ignoreNoSession turns an ended session into a quiet end of a stream.
func ignoreNoSession(err error) error {
	if errors.Is(err, access.ErrNoSession) {
		return nil
	}
	return err
}

// streamErr drops a write error caused by the browser going away: closing
// a tab is not a failure worth a log line.
func streamErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// seatButtons renders one change: the new button of every seat it names.
func seatButtons(ch SeatChange) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		for _, seatID := range ch.SeatIDs {
			s := core.SeatView{Seat: core.Seat{ShowID: ch.ShowID, SeatID: seatID}, State: ch.State, OrderNo: ch.OrderNo}
			if err := web.Seat(s, true).Render(ctx, w); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeSSE sends comp as one "seats" event.
func writeSSE(ctx context.Context, w *echo.Response, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(ctx, &buf); err != nil {
		return fmt.Errorf("render seat event: %w", err)
	}
	return writeEvent(w, "seats", buf.String())
}

// writeEvent sends one event named name. An event's data may span lines,
// each prefixed "data: "; the browser joins them with newlines again.
func writeEvent(w *echo.Response, name, data string) error {
	var ev strings.Builder
	ev.WriteString("event: " + name + "\n")
	for line := range strings.SplitSeq(data, "\n") {
		ev.WriteString("data: ")
		ev.WriteString(line)
		ev.WriteString("\n")
	}
	ev.WriteString("\n")
	if _, err := io.WriteString(w, ev.String()); err != nil {
		return fmt.Errorf("write %s event: %w", name, err)
	}
	w.Flush()
	return nil
}

// keepAliveTicker ticks every sseKeepAlive; tests swap console.keepAlive
// for ticks of their own.
func keepAliveTicker() (<-chan time.Time, func()) {
	t := time.NewTicker(sseKeepAlive)
	return t.C, t.Stop
}

// liftWriteDeadline lets a long response (a stream, a big export) outlive
// the server's WriteTimeout; the request's context still ends it when the
// client goes away.
func (cn *console) liftWriteDeadline(c echo.Context, what string) {
	if err := http.NewResponseController(c.Response()).SetWriteDeadline(time.Time{}); err != nil {
		cn.Logger.WarnContext(c.Request().Context(), "console: cannot lift the write deadline of a "+what, "err", err)
	}
}
