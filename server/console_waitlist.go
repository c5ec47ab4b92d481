package server

import (
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
	"seatflow/web"
)

// The console's side of the waiting list (core/waitlist.go, issue 33): a
// page per show with the list's settings, figures and entries in list
// order, each offer with where its seats came from; managers change the
// settings (Engine.SetWaitlist), clerks add a customer at the desk or on
// the phone and withdraw entries, each audited. Refusals come back as a
// message on the form, never a 500.

// waitlistPageSize bounds the entries the page reads (and counts): each
// one with an offer costs the engine a read of its order.
const waitlistPageSize = 200

// waitlistRoutes mounts the waiting-list page and its forms.
func (cn *console) waitlistRoutes(g *echo.Group, view echo.MiddlewareFunc) {
	manage, sell := cn.requireRole(access.ActShows), cn.requireRole(access.ActCounterSale)
	g.GET("/shows/:id/waitlist", cn.waitlistPage, view)
	g.GET("/shows/:id/waitlist/live", cn.waitlistLive, view)
	g.POST("/shows/:id/waitlist", cn.setWaitlist, manage)
	g.POST("/shows/:id/waitlist/entries", cn.addWaitEntry, sell)
	g.POST("/shows/:id/waitlist/entries/:token/withdraw", cn.withdrawWaitEntry, sell)
}

// waitlistData reads the show, its list's settings (the settings form
// holds them), its categories and its entries with their offers' sources.
func (cn *console) waitlistData(c echo.Context) (web.WaitlistData, error) {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return web.WaitlistData{}, echo.ErrNotFound
	}
	ctx := c.Request().Context()
	show, err := cn.Engine.Store().Show(ctx, id)
	if err != nil {
		return web.WaitlistData{}, err
	}
	d := web.WaitlistData{Show: show}
	if d.Settings, err = cn.Engine.Waitlist(ctx, id); err != nil {
		return d, err
	}
	d.Form = web.WaitlistForm{Enabled: d.Settings.Enabled, JoinWhen: d.Settings.JoinWhen,
		Minutes: strconv.FormatInt(int64(d.Settings.OfferTTL/time.Minute), 10)}
	if d.Categories, err = cn.Engine.Store().PriceCategories(ctx, id); err != nil {
		return d, err
	}
	views, err := cn.Engine.WaitEntries(ctx, id, waitlistPageSize+1)
	if err != nil {
		return d, err
	}
	if len(views) > waitlistPageSize {
		views, d.More = views[:waitlistPageSize], true
	}
	d.Rows, err = cn.waitlistRows(c, views)
	return d, err
}

// waitlistRows adds to each offer where its seats came from. The offer is
// made in the transaction that ends their hold, at its time, so the seats
// spend no time between holders, except after a hold that expired: its
// seats stayed with it until its timeout ended it, and the offer's time
// less the hold's expiry is that wait (the engine's
// seatflow_waitlist_handoff_seconds observes the same).
func (cn *console) waitlistRows(c echo.Context, views []core.WaitEntryView) ([]web.WaitlistRow, error) {
	var offers []string
	for _, v := range views {
		if v.Offer != nil {
			offers = append(offers, v.Offer.OrderNo)
		}
	}
	sources, err := cn.DB.OfferSources(c.Request().Context(), offers)
	if err != nil {
		return nil, err
	}
	rows := make([]web.WaitlistRow, len(views))
	for i, v := range views {
		r := web.WaitlistRow{WaitEntryView: v}
		if v.Offer != nil {
			from, ok := sources[v.Offer.OrderNo]
			switch {
			case !ok:
				r.Source = web.SourceUnknown
			case from.OrderNo == "":
				r.Source = web.SourceBlock
			default:
				r.Source, r.From = web.SourceOrder, from.OrderNo
				if core.ExpiryPath(from.CancelReason, from.CancelActor) != "" {
					r.Expired, r.Gap = true, max(v.Offer.CreatedAt.Sub(from.ExpireAt), 0)
				}
			}
		}
		rows[i] = r
	}
	return rows, nil
}

func (cn *console) waitlistPage(c echo.Context) error {
	d, err := cn.waitlistData(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.WaitlistPage(cn.page(c, "waitlist.title", web.NavShows), d))
}

// waitlistLive is the page's live part alone, for htmx's polling.
func (cn *console) waitlistLive(c echo.Context) error {
	d, err := cn.waitlistData(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.WaitlistLive(cn.page(c, "waitlist.title", web.NavShows), d))
}

// setWaitlist applies the settings form.
func (cn *console) setWaitlist(c echo.Context) error {
	p := cn.page(c, "waitlist.title", web.NavShows)
	d, err := cn.waitlistData(c)
	if err != nil {
		return err
	}
	d.Form = web.WaitlistForm{Enabled: c.FormValue("enabled") != "", JoinWhen: c.FormValue("join_when"),
		Minutes: strings.TrimSpace(c.FormValue("offer_minutes"))}
	minutes, err := strconv.Atoi(d.Form.Minutes)
	switch {
	case !slices.Contains(web.WaitlistJoinWhens, d.Form.JoinWhen):
		d.Error = p.T("waitlist.error.join_when")
	case err != nil || minutes < web.WaitlistMinMinutes || minutes > web.WaitlistMaxMinutes:
		d.Error = p.Tf("waitlist.error.minutes", web.WaitlistMinMinutes, web.WaitlistMaxMinutes)
	}
	if d.Error != "" {
		return render(c, http.StatusUnprocessableEntity, web.WaitlistPage(p, d))
	}
	set, err := cn.Engine.SetWaitlist(c.Request().Context(), core.WaitlistSettings{ShowID: d.Show.ID, Enabled: d.Form.Enabled,
		JoinWhen: d.Form.JoinWhen, OfferTTL: time.Duration(minutes) * time.Minute})
	if err != nil {
		return err
	}
	cn.audit(c, core.AuditEntry{Action: core.AuditWaitlistSettings, Target: "show:" + d.ID(), Detail: map[string]any{
		"waitlist_enabled": set.Enabled, "join_when": set.JoinWhen, "offer_ttl_seconds": int64(set.OfferTTL / time.Second)}})
	return c.Redirect(http.StatusSeeOther, web.URL(fmt.Sprintf("/shows/%d/waitlist?msg=waitlist_saved", d.Show.ID)))
}

// addWaitEntry puts a customer at the desk or on the phone on the list,
// as the box office's entry with the customer's name.
func (cn *console) addWaitEntry(c echo.Context) error {
	p := cn.page(c, "waitlist.title", web.NavShows)
	d, err := cn.waitlistData(c)
	if err != nil {
		return err
	}
	d.Add = web.WaitlistAddForm{Name: strings.TrimSpace(c.FormValue("name")), Email: strings.TrimSpace(c.FormValue("email")),
		Phone: strings.TrimSpace(c.FormValue("phone")), Count: strings.TrimSpace(c.FormValue("count")),
		Category: c.FormValue("category"), Together: c.FormValue("together") != ""}
	limit := min(core.MaxWaitCount, cn.Engine.Config().MaxSeatsPerOrder)
	count, err := strconv.Atoi(d.Add.Count)
	switch {
	case d.Add.Name == "":
		d.AddError = p.T("waitlist.error.name")
	case err != nil || count < 1 || count > limit:
		d.AddError = p.Tf("waitlist.error.count", limit)
	}
	if d.AddError != "" {
		return render(c, http.StatusUnprocessableEntity, web.WaitlistPage(p, d))
	}
	v, _, err := cn.Engine.JoinWaitlist(c.Request().Context(), core.WaitJoin{ShowID: d.Show.ID, UserID: core.BoxOfficeUserID,
		Count: count, Category: d.Add.Category, Together: d.Add.Together,
		Customer: core.Customer{Name: d.Add.Name, Email: d.Add.Email, Phone: d.Add.Phone},
		AddedBy:  core.ActorStaffPrefix + sessionOf(c).staff.Username})
	if err != nil {
		status, msg, ok := waitJoinRefusal(p, err, limit)
		if !ok {
			return err
		}
		d.AddError = msg
		return render(c, status, web.WaitlistPage(p, d))
	}
	cn.audit(c, core.AuditEntry{Action: core.AuditWaitlistAdd, Target: "show:" + d.ID(), Detail: map[string]any{
		"entry": v.Entry.Token, "seats": count, "category": d.Add.Category, "together": d.Add.Together}})
	return c.Redirect(http.StatusSeeOther, web.URL(fmt.Sprintf("/shows/%d/waitlist?msg=waitlist_added", d.Show.ID)))
}

// waitJoinRefusal says why the engine refused a clerk's join, with the
// status of a page saying so; false for an error that is no refusal.
func waitJoinRefusal(p web.Page, err error, limit int) (int, string, bool) {
	var ce *core.Error
	switch {
	case errors.Is(err, core.ErrWaitlistClosed):
		return http.StatusConflict, p.T("waitlist.error.closed"), true
	case errors.Is(err, core.ErrWaitlistNotSold):
		return http.StatusConflict, p.T("waitlist.error.not_sold"), true
	case !errors.As(err, &ce) || ce.Kind != core.KindInvalid:
		return 0, "", false
	case ce.Code == core.CodeUnknownCategory:
		return http.StatusUnprocessableEntity, p.T("waitlist.error.category"), true
	case ce.Field == "count":
		return http.StatusUnprocessableEntity, p.Tf("waitlist.error.count", limit), true
	}
	// A contact the customer checks refuse, or more together than a row
	// seats: the engine's words.
	return http.StatusUnprocessableEntity, ce.Message, true
}

// withdrawWaitEntry takes an entry off the list in two steps, as a force
// cancel: the first post shows what goes (a pending offer is cancelled
// and its seats handed on), the second (confirm=1) withdraws. Withdrawing
// an entry withdrawn or accepted meanwhile changes nothing.
func (cn *console) withdrawWaitEntry(c echo.Context) error {
	p := cn.page(c, "waitlist.title", web.NavShows)
	d, err := cn.waitlistData(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	v, err := cn.Engine.WaitEntry(ctx, c.Param("token"))
	if errors.Is(err, core.ErrWaitEntryNotFound) || err == nil && v.Entry.ShowID != d.Show.ID {
		return echo.ErrNotFound
	}
	if err != nil {
		return err
	}
	if c.FormValue("confirm") != "1" {
		d.Confirm = &v
		return render(c, http.StatusOK, web.WaitlistPage(p, d))
	}
	actor := core.ActorStaffPrefix + sessionOf(c).staff.Username
	after, err := cn.Engine.WithdrawWaitEntry(ctx, v.Entry.Token, actor)
	if err != nil {
		return err
	}
	cn.audit(c, core.AuditEntry{Action: core.AuditWaitlistWithdraw, Target: "show:" + d.ID(), Detail: map[string]any{
		"entry": v.Entry.Token, "entry_state": string(after.State), "offer": v.Entry.OrderNo}})
	return c.Redirect(http.StatusSeeOther, web.URL(fmt.Sprintf("/shows/%d/waitlist?msg=waitlist_withdrawn", d.Show.ID)))
}
