package server

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/admission"
)

// The waiting room's API (core/admission/room.go): an operator configures a
// show's queue, a front end joins its buyers, and a buyer (or the front
// end) polls with the ticket. A ticket is a bearer secret signed with the
// admission key: whoever holds it may see where its buyer stands, so
// polling needs no API key, costs no database round trip, and a forged
// ticket is refused before any store is asked.

type queueSettingsRequest struct {
	Enabled bool   `json:"enabled"`
	Mode    string `json:"mode"`
	// OpensAt (RFC 3339, optional): joins before it form the pre-queue.
	OpensAt *string `json:"opens_at"`
	// WindowSeconds is the admission window in whole seconds (a number,
	// not a duration string: JSON Schema can bound it); 0 or absent is
	// SEATFLOW_QUEUE_WINDOW.
	WindowSeconds int64 `json:"window_seconds"`
	Paused        bool  `json:"paused"`
}

type joinQueueRequest struct {
	UserID int64 `json:"user_id"`
}

type queueJSON struct {
	ShowID        int64  `json:"show_id"`
	Enabled       bool   `json:"enabled"`
	Mode          string `json:"mode"`
	OpensAt       string `json:"opens_at,omitempty"`
	WindowSeconds int64  `json:"window_seconds"`
	Paused        bool   `json:"paused"`
	// SeedHash is published from the moment a queue with opens_at is
	// enabled, Seed once the pre-queue is drawn (seatflow queue verify).
	SeedHash  string `json:"seed_hash,omitempty"`
	Seed      string `json:"seed,omitempty"`
	Joined    int64  `json:"joined"`
	PreJoined int64  `json:"pre_joined"`
	Shuffled  bool   `json:"shuffled"`
	Admitted  int64  `json:"admitted"`
	Waiting   int64  `json:"waiting"`
	Placed    int64  `json:"placed"`
	// Controller is this instance's admission controller for the show, as
	// its last step saw it; absent until one has.
	Controller *controllerJSON `json:"controller,omitempty"`
}

type controllerJSON struct {
	Rate         float64 `json:"rate"` // admissions a second, the output
	PlaceP99MS   int64   `json:"place_p99_ms"`
	Backlog      int64   `json:"backlog"`
	BacklogBound int64   `json:"backlog_bound"`
	Shedding     bool    `json:"shedding"`
	Reason       string  `json:"reason"`
	At           string  `json:"at"`
}

type queueViewJSON struct {
	Ticket        string `json:"ticket"`
	State         string `json:"state"`
	Position      int64  `json:"position"`
	PollAfterMS   int64  `json:"poll_after_ms"`
	Admission     string `json:"admission,omitempty"`
	AdmittedUntil string `json:"admitted_until,omitempty"`
	OpensAt       string `json:"opens_at,omitempty"`
	// EstimatedWaitMS: (position - admitted) / rate, while waiting with a
	// position and a rate.
	EstimatedWaitMS *int64 `json:"estimated_wait_ms,omitempty"`
}

func newQueueJSON(show int64, st admission.Status, snap admission.Snapshot, hasSnap bool) queueJSON {
	j := queueJSON{ShowID: show, Enabled: st.Enabled, Mode: string(st.Mode), WindowSeconds: int64(st.Window / time.Second),
		Paused: st.Paused, SeedHash: st.SeedHash, Seed: st.Seed, Joined: st.Joined, PreJoined: st.PreJoined,
		Shuffled: st.Shuffled, Admitted: st.Admitted, Waiting: max(st.Joined-st.Admitted, 0), Placed: st.Placed}
	if j.Mode == "" {
		j.Mode = string(admission.ModeAlways)
	}
	if !st.OpensAt.IsZero() {
		j.OpensAt = rfc3339(st.OpensAt)
	}
	if hasSnap && !snap.At.IsZero() { // a queue no step has seen yet has no reading
		c := snap.Controller
		j.Controller = &controllerJSON{Rate: c.Rate, PlaceP99MS: c.Signal.PlaceP99.Milliseconds(), Backlog: c.Signal.Backlog,
			BacklogBound: c.Signal.BacklogBound, Shedding: c.Signal.Shedding, Reason: c.Reason, At: rfc3339(snap.At)}
	}
	return j
}

func (s *Server) newQueueViewJSON(show int64, v admission.View) queueViewJSON {
	j := queueViewJSON{Ticket: v.Ticket, State: string(v.State), Position: v.Position,
		PollAfterMS: v.PollAfter.Milliseconds(), Admission: v.Admission}
	if !v.AdmittedUntil.IsZero() {
		j.AdmittedUntil = rfc3339(v.AdmittedUntil)
	}
	if !v.OpensAt.IsZero() {
		j.OpensAt = rfc3339(v.OpensAt)
	}
	if snap, ok := s.room.Snapshot(show); ok && v.State == admission.StateWaiting && v.Position > 0 {
		if w := snap.EstimatedWait(v.Position); w >= 0 {
			ms := w.Milliseconds()
			j.EstimatedWaitMS = &ms
		}
	}
	return j
}

// handlePutQueue replaces a show's queue settings: 200 with the queue.
func (s *Server) handlePutQueue(c echo.Context) error {
	id, err := showID(c)
	if err != nil {
		return err
	}
	var req queueSettingsRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	set := admission.Settings{Enabled: req.Enabled, Mode: admission.Mode(req.Mode), Paused: req.Paused,
		Window: s.cfg.queueConfig().Window}
	switch set.Mode {
	case "":
		set.Mode = admission.ModeAlways
	case admission.ModeAlways, admission.ModeOverload:
	default:
		return &core.Error{Kind: core.KindInvalid, Code: "invalid_request", Field: "mode",
			Message: "mode must be always or overload"}
	}
	if req.OpensAt != nil && *req.OpensAt != "" {
		if set.OpensAt, err = time.Parse(time.RFC3339, *req.OpensAt); err != nil {
			return &core.Error{Kind: core.KindInvalid, Code: "invalid_request", Field: "opens_at",
				Message: "opens_at must be an RFC 3339 time"}
		}
	}
	if req.WindowSeconds != 0 {
		var ok bool
		if set.Window, ok = queueWindow(req.WindowSeconds); !ok {
			return &core.Error{Kind: core.KindInvalid, Code: "invalid_request", Field: "window_seconds",
				Message: "window_seconds must be a whole number from 1 to 86400"}
		}
	}
	ctx := c.Request().Context()
	// The queue belongs to a show: one database read, on an operator's call.
	if _, err := s.db.Show(ctx, id); err != nil {
		return err
	}
	st, err := s.room.Configure(ctx, id, set)
	if err != nil {
		return err
	}
	// Who changed a sale's queue (its opening, its draw) is asked after
	// the sale: the key is the actor, as in the console a manager is.
	a := queueSettingsAudit(id, set)
	a.Staff, a.IP, a.At = apiActor(c), c.RealIP(), time.Now()
	if err := s.db.AddAudit(ctx, a); err != nil {
		s.logger.ErrorContext(ctx, "api: audit log write failed", "action", a.Action, "staff", a.Staff, "err", err)
	}
	snap, ok := s.room.Snapshot(id)
	return c.JSON(http.StatusOK, newQueueJSON(id, st, snap, ok))
}

// queueSettingsAudit is the audit entry of a change of a show's queue
// settings, from the API or the console.
func queueSettingsAudit(show int64, set admission.Settings) core.AuditEntry {
	opensAt := ""
	if !set.OpensAt.IsZero() {
		opensAt = set.OpensAt.UTC().Format(time.RFC3339)
	}
	return core.AuditEntry{Action: admission.AuditQueueSettings, Target: fmt.Sprintf("show:%d", show),
		Detail: map[string]any{"enabled": set.Enabled, "mode": string(set.Mode), "opens_at": opensAt,
			"window_seconds": int64(set.Window / time.Second), "paused": set.Paused}}
}

// handleGetQueue returns a show's queue settings, status and this
// instance's controller; a show never given a queue has a disabled one.
func (s *Server) handleGetQueue(c echo.Context) error {
	id, err := showID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	st, err := s.room.Store().Status(ctx, id)
	if errors.Is(err, admission.ErrNoQueue) {
		if _, err := s.db.Show(ctx, id); err != nil {
			return err
		}
		st, err = admission.Status{Settings: admission.Settings{Mode: admission.ModeAlways, Window: s.cfg.queueConfig().Window}}, nil
	}
	if err != nil {
		return err
	}
	snap, ok := s.room.Snapshot(id)
	return c.JSON(http.StatusOK, newQueueJSON(id, st, snap, ok))
}

// handleJoinQueue puts a buyer in a show's queue: 201 on the first join,
// 200 with the same ticket on a repeat.
func (s *Server) handleJoinQueue(c echo.Context) error {
	id, err := showID(c)
	if err != nil {
		return err
	}
	var req joinQueueRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.UserID <= 0 {
		return core.Invalidf("user_id must be a positive integer")
	}
	v, created, err := s.room.Join(c.Request().Context(), id, req.UserID, time.Now())
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, s.newQueueViewJSON(id, v))
}

// handlePollQueue says where a ticket's buyer stands.
func (s *Server) handlePollQueue(c echo.Context) error {
	v, err := s.room.Poll(c.Request().Context(), c.Param("ticket"), time.Now())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.newQueueViewJSON(v.Show, v))
}

// queueProofJSON is a queue's draw laid open: the published seed and its
// hash, and every join with the position it was given. An operator hands
// it to whoever audits the sale; `seatflow queue verify --file` checks it
// with no store at all (the embedded stack's queue lives in the server).
type queueProofJSON struct {
	ShowID    int64            `json:"show_id"`
	SeedHash  string           `json:"seed_hash,omitempty"`
	Seed      string           `json:"seed,omitempty"`
	PreJoined int64            `json:"pre_joined"`
	Entries   []queueEntryJSON `json:"entries"`
}

type queueEntryJSON struct {
	Seq      int64  `json:"seq"`
	UserID   int64  `json:"user_id"`
	Pre      bool   `json:"pre"`
	Position int64  `json:"position"` // 0 for a pre-queue entry not drawn yet
	JoinedAt string `json:"joined_at"`
}

// handleQueueEntries returns the proof of a show's queue: every join, its
// position, the seed and its hash.
func (s *Server) handleQueueEntries(c echo.Context) error {
	id, err := showID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	st, err := s.room.Store().Status(ctx, id)
	if errors.Is(err, admission.ErrNoQueue) {
		return admission.ErrQueueNotFound
	}
	if err != nil {
		return err
	}
	entries, positions, err := s.room.Store().Entries(ctx, id)
	if err != nil {
		return err
	}
	p := queueProofJSON{ShowID: id, SeedHash: st.SeedHash, Seed: st.Seed, PreJoined: st.PreJoined,
		Entries: make([]queueEntryJSON, len(entries))}
	for i, e := range entries {
		p.Entries[i] = queueEntryJSON{Seq: e.Seq, UserID: e.User, Pre: e.Pre, Position: positions[i],
			JoinedAt: rfc3339(e.JoinedAt)}
	}
	return c.JSON(http.StatusOK, p)
}
