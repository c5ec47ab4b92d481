package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/reconcile"
	"seatflow/core/stacktest"
	"seatflow/core/store"
)

// TestConsoleEditShow: a manager edits a show's details from the console
// (times in the console's zone, UTC here), audited; bad input comes back
// on the form with its reason and writes nothing; once the show has an
// order the form is disabled and a post refused (409).
func TestConsoleEditShow(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		env := newConsoleEnvOn(t, st)
		b := env.login(access.RoleManager)
		ctx := context.Background()
		show, err := env.db.Show(ctx, env.stack.NewShow(t, 1, 3).ID) // as stored, to the millisecond
		if err != nil {
			t.Fatal(err)
		}
		path := fmt.Sprintf("/console/shows/%d/edit", show.ID)
		if rec := b.do("GET", path, nil, nil); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `id="show-edit-form"`) ||
			strings.Contains(rec.Body.String(), `id="show-edit-locked"`) {
			t.Fatalf("edit form: %d", rec.Code)
		}
		good := url.Values{"name": {"Matinee"}, "venue": {"Small hall"}, "starts_at": {"2030-05-01T14:30"}, "sales_end": {"2030-05-01T12:00"}}
		with := func(k, v string) url.Values {
			f := url.Values{}
			for key, vs := range good {
				f[key] = vs
			}
			f.Set(k, v)
			return f
		}
		for _, c := range []struct {
			name string
			form url.Values
			want string // the form's error
		}{
			{"empty name", with("name", ""), "name: 1 to 200 characters"},
			{"sales end after the start", with("sales_end", "2030-05-01T15:00"), "sales_end: must not be after starts_at"},
			{"not a time", with("starts_at", "soon"), "Starts: not a date and time."},
			{"a bad sales end", with("sales_end", "2030-13-01T12:00"), "Sales end: not a date and time."},
			{"no start", with("starts_at", ""), "starts_at: an RFC 3339 time is required"},
		} {
			t.Run(c.name, func(t *testing.T) {
				audits := env.auditCount(core.AuditShowEdit)
				rec := b.post(path, c.form)
				if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), c.want) {
					t.Fatalf("status %d, want 422 with %q: %.400s", rec.Code, c.want, rec.Body.String()[max(strings.Index(rec.Body.String(), "<main"), 0):])
				}
				if now, err := env.db.Show(ctx, show.ID); err != nil || now != show || env.auditCount(core.AuditShowEdit) != audits {
					t.Errorf("a refused edit wrote: %+v, %v", now, err)
				}
			})
		}
		if rec := b.post(path, good); rec.Code != http.StatusSeeOther || !strings.HasSuffix(rec.Header().Get("Location"), "?msg=show_edited") {
			t.Fatalf("save: %d %s", rec.Code, rec.Body)
		}
		edited, err := env.db.Show(ctx, show.ID)
		wantStart := time.Date(2030, 5, 1, 14, 30, 0, 0, time.UTC)
		if err != nil || edited.Name != "Matinee" || edited.Venue != "Small hall" || !edited.StartsAt.Equal(wantStart) ||
			!edited.SalesEnd.Equal(wantStart.Add(-150*time.Minute)) {
			t.Errorf("edited show %+v, %v", edited, err)
		}
		if n := env.auditCount(core.AuditShowEdit); n != 1 {
			t.Errorf("%d show_edit audit entries, want 1", n)
		}
		// Clearing the sales end sells until the start again.
		if rec := b.post(path, with("sales_end", "")); rec.Code != http.StatusSeeOther {
			t.Fatalf("clear sales end: %d", rec.Code)
		}
		if s, _ := env.db.Show(ctx, show.ID); !s.SalesEnd.IsZero() {
			t.Errorf("sales end not cleared: %v", s.SalesEnd)
		}
	})
}

// TestConsoleEditShowLocked: once a show has an order its edit form is
// disabled with the reason and a post is refused (409), nothing written.
func TestConsoleEditShowLocked(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		env := newConsoleEnvOn(t, st)
		b := env.login(access.RoleManager)
		env.place(5, "A-1")
		before, err := env.db.Show(context.Background(), env.show.ID)
		if err != nil {
			t.Fatal(err)
		}
		path := fmt.Sprintf("/console/shows/%d/edit", env.show.ID)
		if rec := b.do("GET", path, nil, nil); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `id="show-edit-locked"`) ||
			!strings.Contains(rec.Body.String(), "<fieldset disabled") {
			t.Fatalf("locked form: %d %.300s", rec.Code, rec.Body)
		}
		rec := b.post(path, url.Values{"name": {"Late"}, "starts_at": {"2030-05-01T14:30"}})
		if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "This show has orders") {
			t.Fatalf("edit after an order: %d", rec.Code)
		}
		if now, _ := env.db.Show(context.Background(), env.show.ID); now != before {
			t.Errorf("a refused edit wrote: %+v", now)
		}
	})
}

// TestConsoleCancelShow: the confirm page lists the holds that will end and
// the paid orders to refund; cancelling ends the holds through the cancel
// path (seat store and DB agree, reconcile's invariants hold), keeps the
// paid seats sold, is audited, lists the paid orders after, and the show
// sells no more.
func TestConsoleCancelShow(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		env := newConsoleEnvOn(t, st)
		ctx := context.Background()
		b := env.login(access.RoleManager)
		hold := env.place(5, "A-1", "A-2")
		paid := env.place(6, "B-1")
		env.pay(paid)
		path := fmt.Sprintf("/console/shows/%d/cancel", env.show.ID)
		page := b.do("GET", path, nil, nil).Body.String()
		for _, want := range []string{`id="cancel-pending-` + hold.OrderNo + `"`, `id="cancel-paid-` + paid.OrderNo + `"`,
			`id="cancel-show-confirm"`, "Holds that end now (1)", "Paid orders to refund (1)"} {
			if !strings.Contains(page, want) {
				t.Errorf("confirm page lacks %s", want)
			}
		}
		if rec := b.post(path, nil); rec.Code != http.StatusSeeOther || !strings.HasSuffix(rec.Header().Get("Location"), "?msg=show_cancelled") {
			t.Fatalf("cancel: %d %s", rec.Code, rec.Body)
		}
		o, err := env.db.Order(ctx, hold.OrderNo)
		if err != nil || o.Status != core.StatusCancelled || o.CancelReason != core.ReasonShowCancelled ||
			o.CancelActor != core.ActorStaffPrefix+env.staff[access.RoleManager].Username {
			t.Errorf("the hold after the show's cancel: %+v, %v", o, err)
		}
		// Seat by seat, the seat store and the DB agree: only the paid
		// seat is taken.
		holds, err := st.Seats.Holds(ctx, env.show.ID)
		if err != nil {
			t.Fatal(err)
		}
		taken, err := env.db.TakenSeats(ctx, env.show.ID)
		if err != nil {
			t.Fatal(err)
		}
		for name, hs := range map[string][]core.SeatHold{"seat store": holds, "DB": taken} {
			if len(hs) != 1 || hs[0].SeatID != "B-1" || hs[0].OrderNo != paid.OrderNo || hs[0].State != core.SeatSold {
				t.Errorf("%s after the cancel: %+v, want B-1 sold to %s alone", name, hs, paid.OrderNo)
			}
		}
		if err := reconcile.CheckInvariants(ctx, env.db, st.Seats, time.Now()); err != nil {
			t.Errorf("seat store and DB disagree: %v", err)
		}
		entries, err := env.db.AuditLog(ctx, store.AuditQuery{Action: core.AuditShowCancel, Limit: 10})
		if err != nil || len(entries) != 1 || !slices.Equal(anyStrings(entries[0].Detail["cancelled_orders"]), []string{hold.OrderNo}) ||
			!slices.Equal(anyStrings(entries[0].Detail["paid_orders"]), []string{paid.OrderNo}) {
			t.Errorf("audit of the cancel: %+v, %v", entries, err)
		}
		after := b.do("GET", path, nil, nil).Body.String()
		if !strings.Contains(after, `id="show-cancelled"`) || !strings.Contains(after, `id="cancel-paid-`+paid.OrderNo+`"`) ||
			strings.Contains(after, `id="cancel-show-form"`) {
			t.Errorf("the page after cancelling does not list the paid order to refund")
		}
		if _, err := env.engine.Place(ctx, core.PlaceRequest{UserID: 7, ShowID: env.show.ID, SeatIDs: []string{"C-1"}}); err == nil ||
			!strings.Contains(err.Error(), "cancelled") {
			t.Errorf("placed on a cancelled show: %v", err)
		}
		if rec := env.login(access.RoleBoxOffice).post(path, nil); rec.Code != http.StatusForbidden {
			t.Errorf("box office cancels a show: %d", rec.Code)
		}
	})
}

// anyStrings reads a JSON list of strings from an audit detail.
func anyStrings(v any) []string {
	var out []string
	switch l := v.(type) {
	case []any:
		for _, x := range l {
			out = append(out, fmt.Sprint(x))
		}
	case []string:
		out = l
	}
	return out
}

// TestConsoleDraftShow: a manager sets a show up as a draft from the form;
// it sells nothing (show_not_on_sale) until published from its edit page,
// which is audited.
func TestConsoleDraftShow(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		env := newConsoleEnvOn(t, st)
		ctx := context.Background()
		b := env.login(access.RoleManager)
		fields := newShowFields("grid")
		fields["draft"] = "1"
		rec := b.postMultipart("/console/shows", fields, "", "")
		var id int64
		if _, err := fmt.Sscanf(rec.Header().Get("Location"), "/console/shows/%d", &id); err != nil {
			t.Fatalf("create a draft: %d %s", rec.Code, rec.Header().Get("Location"))
		}
		env.stack.CleanupSeats(t, id)
		if s, err := env.db.Show(ctx, id); err != nil || s.Status != core.ShowDraft {
			t.Fatalf("the new show: %+v, %v", s, err)
		}
		if _, err := env.engine.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: id, SeatIDs: []string{"A-1"}}); !errors.Is(err, core.ErrShowDraft) {
			t.Errorf("order on a draft: %v", err)
		}
		edit := fmt.Sprintf("/console/shows/%d/edit", id)
		if page := b.do("GET", edit, nil, nil).Body.String(); !strings.Contains(page, `id="publish-show-form"`) {
			t.Fatalf("the draft's edit page has no publish form")
		}
		if rec := b.post(fmt.Sprintf("/console/shows/%d/publish", id), nil); rec.Code != http.StatusSeeOther {
			t.Fatalf("publish: %d", rec.Code)
		}
		if s, _ := env.db.Show(ctx, id); s.Status != core.ShowOnSale || env.auditCount(core.AuditShowPublish) != 1 {
			t.Errorf("after publishing: %s, %d audit entries", s.Status, env.auditCount(core.AuditShowPublish))
		}
		if page := b.do("GET", edit, nil, nil).Body.String(); strings.Contains(page, `id="publish-show-form"`) {
			t.Errorf("a show on sale offers to publish")
		}
		if _, err := env.engine.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: id, SeatIDs: []string{"A-1"}}); err != nil {
			t.Errorf("order after publishing: %v", err)
		}
	})
}

// TestConsoleReprice: a manager changes a category's price in the
// currency's units on the show's edit page (audited; the next order pays
// it); a bad amount comes back on the form as typed, nothing written;
// once the show has an order the prices are refused (409).
func TestConsoleReprice(t *testing.T) {
	env := newConsoleEnv(t)
	b := env.login(access.RoleManager)
	ctx := context.Background()
	show, err := env.engine.CreateShow(ctx, core.NewShow{Name: "Prices", StartsAt: time.Now().Add(24 * time.Hour), Currency: "EUR",
		Plan: core.PlanSpec{Categories: []core.PriceCategory{{Code: "A", Name: "Stalls", PriceCents: 5000}, {Code: "B", Name: "Balcony", PriceCents: 3000}},
			Grid: &core.GridSpec{Rows: 2, SeatsPerRow: 2, RowCategories: []core.RowCategory{{From: 1, To: 1, Category: "A"}, {From: 2, To: 2, Category: "B"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	edit := fmt.Sprintf("/console/shows/%d/edit", show.ID)
	prices := fmt.Sprintf("/console/shows/%d/prices", show.ID)
	if body := b.do("GET", edit, nil, nil).Body.String(); !strings.Contains(body, `id="price-A"`) || !strings.Contains(body, `value="50.00"`) ||
		!strings.Contains(body, `value="30.00"`) {
		t.Fatalf("the prices form lacks the stored prices in euros: %.3000s", body)
	}
	for _, c := range []struct {
		name   string
		a, b   string
		status int
		want   string // in the answer
	}{
		{"not an amount", "fifty", "30", http.StatusUnprocessableEntity, "Stalls: &#34;fifty&#34; is not an amount of EUR"},
		{"three decimals", "50.005", "30", http.StatusUnprocessableEntity, "with at most 2 decimals"},
		{"stalls at 65.50", "65.5", "30", http.StatusSeeOther, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			audits := env.auditCount(core.AuditShowReprice)
			rec := b.post(prices, url.Values{"price_A": {c.a}, "price_B": {c.b}})
			if rec.Code != c.status || c.want != "" && !strings.Contains(rec.Body.String(), c.want) {
				t.Fatalf("%d, want %d with %q: %.2000s", rec.Code, c.status, c.want, rec.Body)
			}
			want := audits
			if c.status == http.StatusSeeOther {
				want++
			} else if !strings.Contains(rec.Body.String(), `value="`+c.a+`"`) {
				t.Errorf("the form lost what was typed (%q)", c.a)
			}
			if got := env.auditCount(core.AuditShowReprice); got != want {
				t.Errorf("%d show_reprice audit rows, want %d", got, want)
			}
		})
	}
	cats, err := env.db.PriceCategories(ctx, show.ID)
	if err != nil || cats[0].PriceCents != 6550 || cats[1].PriceCents != 3000 {
		t.Fatalf("categories %+v (%v), want A 6550, B 3000", cats, err)
	}
	o, err := env.engine.Place(ctx, core.PlaceRequest{UserID: 5, ShowID: show.ID, SeatIDs: []string{"A-1"}})
	if err != nil || o.AmountCents != 6550 {
		t.Fatalf("order %+v (%v), want the new price 6550", o, err)
	}
	rec := b.post(prices, url.Values{"price_A": {"70"}, "price_B": {"30"}})
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), `id="show-edit-locked"`) {
		t.Fatalf("prices after an order: %d, want 409 and the form locked: %.1500s", rec.Code, rec.Body)
	}
}
