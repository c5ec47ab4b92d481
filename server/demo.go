package server

import (
	"context"
	"fmt"
	"time"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/store"
)

// Demo show layout: big enough to show a real seat map (20 rows × 30).
const (
	demoShowName  = "SeatFlow Gala"
	demoRows      = 20
	demoCols      = 30
	demoBasePrice = 8000 // cents; front rows cost more (store.DemoSeats)
)

// Demo is what SetUpDemo found or made.
type Demo struct {
	Show        core.Show
	ShowCreated bool
	// Logins are the new demo accounts (one per role) with their
	// passwords, shown once; empty when staff accounts existed already.
	Logins []DemoLogin
}

// DemoLogin is one demo console account.
type DemoLogin struct{ User, Role, Password string }

// SetUpDemo creates the demo show when the database has no show, and one
// account per role when it has no staff, so running it twice adds nothing.
func SetUpDemo(ctx context.Context, db *store.DB) (Demo, error) {
	var d Demo
	shows, err := db.Shows(ctx)
	if err != nil {
		return d, fmt.Errorf("demo: list shows: %w", err)
	}
	if len(shows) > 0 {
		d.Show = shows[0]
	} else {
		d.Show, err = db.CreateShow(ctx, core.Show{
			Name:     demoShowName,
			Venue:    "Main Hall",
			StartsAt: time.Now().UTC().Add(30 * 24 * time.Hour).Truncate(time.Hour),
		}, store.DemoSeats(demoRows, demoCols, demoBasePrice))
		if err != nil {
			return d, fmt.Errorf("demo: %w", err)
		}
		d.ShowCreated = true
	}
	staff, err := db.StaffList(ctx)
	if err != nil {
		return d, fmt.Errorf("demo: list staff: %w", err)
	}
	if len(staff) > 0 {
		return d, nil
	}
	for _, role := range access.AllRoles() { // one account per role, named after it
		password := newToken()[:20]
		if _, err := createStaff(ctx, db, string(role), password, string(role), cliActor.Staff, time.Now().UTC()); err != nil {
			return d, fmt.Errorf("demo: %w", err)
		}
		d.Logins = append(d.Logins, DemoLogin{User: string(role), Role: string(role), Password: password})
	}
	return d, nil
}
