package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/store"
)

// createStaff checks and adds an account made by by (staff:<name>, cli):
// the one path for the console's staff page and `seatflow staff add`.
func createStaff(ctx context.Context, db *store.DB, username, password, role, by string, now time.Time) (access.Staff, error) {
	if err := access.ValidUsername(username); err != nil {
		return access.Staff{}, err
	}
	r, err := access.ParseRole(role)
	if err != nil {
		return access.Staff{}, err
	}
	if err := access.ValidPassword(password, username); err != nil {
		return access.Staff{}, err
	}
	return insertStaff(ctx, db, access.Staff{Username: username, Role: r, CreatedAt: now, CreatedBy: by}, password)
}

// createStaffForLink is createStaff for an account whose owner sets the
// password through a one-time link: until then it has a random one that
// nobody ever sees.
func createStaffForLink(ctx context.Context, db *store.DB, username, role, by string, now time.Time) (access.Staff, error) {
	if err := access.ValidUsername(username); err != nil {
		return access.Staff{}, err
	}
	r, err := access.ParseRole(role)
	if err != nil {
		return access.Staff{}, err
	}
	return insertStaff(ctx, db, access.Staff{Username: username, Role: r, CreatedAt: now, CreatedBy: by}, newToken())
}

func insertStaff(ctx context.Context, db *store.DB, s access.Staff, password string) (access.Staff, error) {
	username := s.Username
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return access.Staff{}, fmt.Errorf("add staff %q: hash password: %w", username, err)
	}
	s, err = db.CreateStaff(ctx, s, string(hash))
	if err != nil {
		return access.Staff{}, fmt.Errorf("add staff %q: %w", username, err)
	}
	return s, nil
}

// staffFormError is the staff form's message for a refused account, or ""
// when err is not the form's fault.
func staffFormError(err error) string {
	switch {
	case errors.Is(err, access.ErrStaffExists):
		return "staff.err_exists"
	case errors.Is(err, access.ErrBadUsername):
		return "staff.err_username"
	case errors.Is(err, access.ErrBadRole):
		return "staff.err_role"
	case errors.Is(err, access.ErrWeakPassword):
		return "staff.err_password"
	case errors.Is(err, access.ErrPasswordHasUsername):
		return "staff.err_password_username"
	case errors.Is(err, access.ErrCommonPassword):
		return "staff.err_password_common"
	}
	return ""
}

// StaffAdd is `seatflow staff add [--role ROLE] NAME`: it creates an account
// with a generated password and prints the password once. Generating it
// keeps passwords out of shell history and process lists; the member of
// staff is expected to be handed it in person.
func StaffAdd(ctx context.Context, db *store.DB, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("staff add", flag.ContinueOnError)
	fs.SetOutput(stdout)
	role := fs.String("role", string(access.RoleBoxOffice), "box_office, ops or admin")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: seatflow staff add [--role box_office|ops|admin] NAME")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("staff add: %w", err)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("staff add: give exactly one NAME (flags go before it)")
	}
	password := newToken()[:20]
	s, err := createStaff(ctx, db, fs.Arg(0), password, *role, cliActor.Staff, time.Now().UTC())
	if err != nil {
		return fmt.Errorf("staff add: %w", err)
	}
	if err := db.AddAudit(ctx, core.AuditEntry{At: time.Now().UTC(), Staff: core.ActorCLI, Action: core.AuditStaffAdd,
		Target: "staff:" + s.Username, Detail: map[string]any{"role": string(s.Role)}}); err != nil {
		return fmt.Errorf("staff add: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "added %s (%s); password: %s\n", s.Username, s.Role, password)
	return err
}

// cliStaff is the account a staff command names, typed in any case.
func cliStaff(ctx context.Context, db *store.DB, typed string) (access.Staff, error) {
	s, _, err := db.StaffLogin(ctx, strings.ToLower(strings.TrimSpace(typed)))
	return s, err
}
