package server

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/store"
	"seatflow/web"
)

// The approvals inbox (refund and write-off requests waiting for a second
// person), its count in the navigation, and a requester's own requests on
// their dashboard.

const (
	// myRequestsWindow and myRequestsShown: a requester's dashboard lists
	// their refund requests of the last week, newest first.
	myRequestsWindow = 7 * 24 * time.Hour
	myRequestsShown  = 10
)

func (cn *console) inboxRoutes(g *echo.Group) {
	g.GET("/inbox", cn.inbox, cn.requireRole(access.ActApproveRefund))
}

// inboxCount is the navigation's count for the signed-in approver: the
// requests waiting that they did not ask for. A failed read shows no count
// rather than no page; with the database known down it is not tried.
func (cn *console) inboxCount(ctx context.Context, p web.Page) int {
	if !p.ShowsInbox() || slices.Contains(strings.Split(p.StoreDown, ", "), storeDatabase) {
		return 0
	}
	n, err := cn.DB.ApprovalsWaiting(ctx, p.Staff.Username)
	if err != nil {
		cn.Logger.WarnContext(ctx, "console: counting approvals waiting", "err", err)
		return 0
	}
	return n
}

// inbox lists the refund and write-off requests waiting, oldest first. One
// the viewer may not decide under the four-eyes rules (they asked for it,
// or one of the two made the other's account) is listed as waiting for
// someone else, with no decision offered.
func (cn *console) inbox(c echo.Context) error {
	ctx := c.Request().Context()
	refunds, err := cn.DB.RefundRequestsWaiting(ctx, web.InboxShown+1)
	if err != nil {
		return err
	}
	cases, err := cn.DB.DiscrepancyCases(ctx, store.CaseQuery{States: []core.CaseState{core.CaseWriteOffRequested}, Limit: web.InboxShown + 1})
	if err != nil {
		return err
	}
	var d web.InboxData
	if len(refunds) > web.InboxShown || len(cases) > web.InboxShown {
		d.More = true
		refunds, cases = refunds[:min(len(refunds), web.InboxShown)], cases[:min(len(cases), web.InboxShown)]
	}
	for _, r := range refunds {
		d.Items = append(d.Items, web.InboxItem{Kind: web.InboxRefund, ID: r.ID, OrderNo: r.OrderNo, Code: r.Code,
			AmountCents: r.AmountCents, Currency: r.Currency, Reason: r.Reason, RequestedBy: r.RequestedBy, At: r.CreatedAt})
	}
	for _, x := range cases {
		// The owner of a write-off request is who asked for it (core.Cases.Move).
		d.Items = append(d.Items, web.InboxItem{Kind: web.InboxWriteOff, ID: x.ID, OrderNo: x.OrderNo,
			AmountCents: x.AmountCents, Currency: x.Currency, Reason: x.Note,
			RequestedBy: core.ActorStaffPrefix + x.Owner, At: x.UpdatedAt})
	}
	slices.SortStableFunc(d.Items, func(a, b web.InboxItem) int { return cmp.Compare(a.At.UnixNano(), b.At.UnixNano()) })
	me := core.ActorStaffPrefix + sessionOf(c).staff.Username
	blocked := map[string]string{} // by requester: the lineage walk once each
	for i, it := range d.Items {
		why, ok := blocked[it.RequestedBy]
		if !ok {
			if why, err = approvalBlocked(ctx, cn.DB, it.RequestedBy, me); err != nil {
				return err
			}
			blocked[it.RequestedBy] = why
		}
		d.Items[i].Blocked = why
	}
	return render(c, http.StatusOK, web.InboxPage(cn.page(c, "inbox.title", web.NavInbox), d))
}

// approvalBlocked is the catalog key of why approver may not decide what
// requester asked for, or "" when they may.
func approvalBlocked(ctx context.Context, c core.Creators, requester, approver string) (string, error) {
	err := core.MayApprove(ctx, c, requester, approver)
	switch {
	case err == nil:
		return "", nil
	case errors.Is(err, core.ErrSelfApproval):
		return "inbox.yours", nil
	case errors.Is(err, core.ErrLinkedApproval):
		return "inbox.linked", nil
	}
	return "", err
}

// myRequests is the signed-in member of staff's refund requests of the last
// week with their outcome, for their dashboard.
func (cn *console) myRequests(ctx context.Context, username string, now time.Time) ([]web.RequestOutcome, error) {
	rs, err := cn.DB.RefundRequestsBy(ctx, core.ActorStaffPrefix+username, now.Add(-myRequestsWindow), myRequestsShown)
	if err != nil {
		return nil, err
	}
	out := make([]web.RequestOutcome, len(rs))
	for i, r := range rs {
		out[i] = web.RequestOutcome{Refund: r.Refund, Code: r.Code, Currency: r.Currency}
	}
	return out, nil
}

// myWriteOffs is the write-offs the signed-in member of staff asked for
// in the last week with their outcome, for their dashboard (ops and admin,
// who work the cases).
func (cn *console) myWriteOffs(ctx context.Context, p web.Page, now time.Time) ([]web.WriteOffOutcome, error) {
	if !p.Can(access.ActDiscrepancies) {
		return nil, nil
	}
	ws, err := cn.DB.WriteOffRequestsBy(ctx, p.Staff.Username, now.Add(-myRequestsWindow), myRequestsShown)
	if err != nil {
		return nil, err
	}
	out := make([]web.WriteOffOutcome, len(ws))
	for i, w := range ws {
		out[i] = web.WriteOffOutcome{CaseID: w.CaseID, AmountCents: w.AmountCents, Currency: w.Currency,
			DecidedBy: w.DecidedBy, DecidedAt: w.DecidedAt, DecidedTo: w.DecidedTo}
	}
	return out, nil
}
