package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/checkin"
	"seatflow/web"
)

// doorRoutes mounts the gate's scan page, the only pages the door role
// reaches (and the sign-out).
func (cn *console) doorRoutes(g *echo.Group) {
	door := cn.requireRole(access.ActCheckin)
	g.GET("/door", cn.doorPage, door)
	g.POST("/door", cn.doorScan, door)
}

func (cn *console) doorPage(c echo.Context) error {
	return render(c, http.StatusOK, web.DoorPage(cn.page(c, "door.title", web.NavDoor), web.DoorData{Gate: c.QueryParam("gate")}))
}

// doorScan admits the scanned code at the form's gate and shows the answer;
// a refusal is an answer too (200), only bad input and failures are errors.
func (cn *console) doorScan(c echo.Context) error {
	s := sessionOf(c)
	d := web.DoorData{Gate: c.FormValue("gate")}
	p := cn.page(c, "door.title", web.NavDoor)
	a, err := cn.Checkins.Admit(c.Request().Context(), checkin.Request{Code: c.FormValue("code"), Gate: d.Gate,
		Actor: core.ActorStaffPrefix + s.staff.Username})
	var ce *core.Error
	switch {
	case err == nil:
		d.Result, d.Seats, d.Count, d.Of = checkin.ResultAdmitted, a.Seats, a.AdmittedCount, len(a.Order.SeatIDs)
	case errors.Is(err, checkin.ErrAlreadyCheckedIn), errors.Is(err, checkin.ErrNotValid):
		errors.As(err, &ce)
		r := ce.Detail.(*checkin.Refusal)
		d.Result, d.Reason, d.Seats = ce.Code, r.Reason, r.Seats
		if r.First != nil {
			d.FirstAt, d.FirstGate, d.FirstBy = p.Time(r.First.At), r.First.Gate, r.First.By
		}
	default:
		return err
	}
	return render(c, http.StatusOK, web.DoorPage(p, d))
}
