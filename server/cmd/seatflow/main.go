// Command seatflow runs the SeatFlow order engine and its HTTP API.
//
//	seatflow [serve] [--demo]   migrate the database, then serve (default)
//	seatflow migrate            apply database migrations and exit
//	seatflow demo               create the demo show and admin, print how to call the API
//	seatflow staff add NAME     create a console account and print its password
//	seatflow reconcile --once   run the reconcile checks once and print the result
//	seatflow seats rebuild      recompute Redis seat state from the database
//
// Configuration is read from SEATFLOW_* environment variables; see
// server.LoadConfig.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"seatflow/core/admission"
	"seatflow/core/reconcile"
	"seatflow/core/store"
	"seatflow/server"
	"seatflow/server/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args, os.Getenv, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "seatflow:", err)
		os.Exit(1)
	}
}

const usage = `usage: seatflow [command] [flags]

commands:
  serve [--demo]  migrate the database and serve HTTP (default); --demo also
                  creates the demo show when there is none
  migrate         apply database migrations and exit
  demo            create the demo show and a console admin (if there are none)
                  and print how to use them
  staff add [--role box_office|ops|admin] NAME
                  create a console account; its password is printed once
  staff reset-link NAME
                  print a one-time link (24 h) that sets NAME's password
  staff reset-2fa NAME
                  remove NAME's second factor (a lost phone)
  staff unlock-2fa NAME
                  lift the lock wrong codes put on NAME's second factor
  apikey add --name NAME --scope SCOPE[,SCOPE...] | apikey list | apikey revoke ID
                  manage API keys (scopes: orders:read, orders:write,
                  shows:write, reconcile, refunds; the right client_ip);
                  add prints the key once
  reconcile --once [--dry-run]
                  run the six reconcile checks now, print what they found and
                  fixed; exits non-zero when a check had errors
  seats rebuild   recompute the Redis seat state of every show from the
                  database (after a flushed or failed-over Redis)
  archive --before DATE [--dir DIR] [--delete] | archive --verify MANIFEST
                  copy the audit log and money records older than DATE to
                  gzip JSON Lines files (default folder: <data>/archive) and
                  verify them; --delete then removes the archived audit rows
  queue verify --show N
                  recompute a show's pre-queue order from its published seed
                  and the joins; exits non-zero on the first mismatch
  bench SCENARIO  load benchmarks against a server it starts (see BENCHMARKS.md)
  help            show this text

configuration: SEATFLOW_* environment variables, every one listed with its
default in README.md, "Configuration (environment variables)"; the main ones:
SEATFLOW_ADDR, SEATFLOW_DB, SEATFLOW_REDIS, SEATFLOW_MQ, SEATFLOW_API_TOKEN,
SEATFLOW_PAYMENT_SECRET, SEATFLOW_ADMISSION_KEY
`

// run is the whole program; main only supplies the process's environment.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cmd, rest := "serve", args[1:]
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		cmd, rest = rest[0], rest[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, rest, getenv, stdout)
	case "migrate":
		return migrate(ctx, rest, getenv, stdout)
	case "demo":
		return demo(ctx, rest, getenv, stdout)
	case "staff":
		return staff(ctx, rest, getenv, stdout)
	case "apikey":
		return apikey(ctx, rest, getenv, stdout)
	case "reconcile":
		return reconcileOnce(ctx, rest, getenv, stdout)
	case "seats":
		return seatsRebuild(ctx, rest, getenv, stdout)
	case "archive":
		return archive(ctx, rest, getenv, stdout)
	case "queue":
		return queue(ctx, rest, getenv, stdout)
	case "bench":
		return bench.Run(ctx, rest, getenv, stdout)
	case "help":
		_, err := io.WriteString(stdout, usage)
		return err
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

// parseFlags parses a subcommand's flags; -h prints usage and is not an error.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) (help bool, err error) {
	fs.SetOutput(stdout)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return true, nil
		}
		return false, err
	}
	if fs.NArg() > 0 {
		return false, fmt.Errorf("%s: unexpected arguments %q", fs.Name(), fs.Args())
	}
	return false, nil
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) (err error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	withDemo := fs.Bool("demo", false, "create the demo show if the database has no show")
	if help, err := parseFlags(fs, args, stdout); help || err != nil {
		return err
	}
	cfg, err := server.LoadConfig(getenv)
	if err != nil {
		return err
	}
	logger := server.NewLogger(stdout, cfg.LogLevel)
	if err := printGeneratedSecrets(stdout, cfg, "for this run only"); err != nil {
		return err
	}
	logger.InfoContext(ctx, "starting", "config", cfg)

	app, err := server.NewApp(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, app.Close()) }()
	if *withDemo {
		d, err := server.SetUpDemo(ctx, app.DB)
		if err != nil {
			return err
		}
		printDemo(stdout, cfg, d)
	}
	return app.Serve(ctx)
}

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if help, err := parseFlags(flag.NewFlagSet("migrate", flag.ContinueOnError), args, stdout); help || err != nil {
		return err
	}
	_, db, err := openDB(ctx, getenv)
	if err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("close database: %w", err)
	}
	_, err = fmt.Fprintln(stdout, "database is migrated")
	return err
}

func demo(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) (err error) {
	if help, err := parseFlags(flag.NewFlagSet("demo", flag.ContinueOnError), args, stdout); help || err != nil {
		return err
	}
	cfg, db, err := openDB(ctx, getenv)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	d, err := server.SetUpDemo(ctx, db)
	if err != nil {
		return err
	}
	if err := printGeneratedSecrets(stdout, cfg, "export them before `seatflow serve`, or run `seatflow serve --demo`"); err != nil {
		return err
	}
	printDemo(stdout, cfg, d)
	return nil
}

func staff(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) (err error) {
	if len(args) == 0 || (args[0] != "add" && args[0] != "reset-link" && args[0] != "reset-2fa" && args[0] != "unlock-2fa") {
		return fmt.Errorf("usage: seatflow staff add [--role box_office|manager|ops|admin] NAME | staff reset-link NAME | staff reset-2fa NAME | staff unlock-2fa NAME")
	}
	_, db, err := openDB(ctx, getenv)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	switch args[0] {
	case "reset-link":
		return server.StaffResetLink(ctx, db, args[1:], stdout)
	case "reset-2fa":
		return server.StaffResetSecondFactor(ctx, db, args[1:], stdout)
	case "unlock-2fa":
		return server.StaffUnlockSecondFactor(ctx, db, args[1:], stdout)
	}
	return server.StaffAdd(ctx, db, args[1:], stdout)
}

func apikey(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) (err error) {
	_, db, err := openDB(ctx, getenv)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	return server.APIKeyCommand(ctx, db, args, stdout)
}

func archive(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) (err error) {
	cfg, db, err := openDB(ctx, getenv)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	return server.ArchiveCommand(ctx, db, args, filepath.Join(dataDir(cfg), "archive"), time.Now().UTC(), stdout)
}

// queue opens the App only for --show: a proof file needs no store.
func queue(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	return server.QueueCommand(ctx, func() (admission.Store, io.Closer, error) {
		app, err := openToolApp(ctx, getenv, "queue verify --show",
			"GET /api/v1/shows/{id}/queue/entries into a file, then seatflow queue verify --file")
		if err != nil {
			return nil, nil, err
		}
		return app.Room().Store(), app, nil
	}, args, stdout)
}

func reconcileOnce(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) (err error) {
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	once := fs.Bool("once", false, "run every check once and exit (the only mode: the server schedules runs itself)")
	dryRun := fs.Bool("dry-run", false, "report what each check would repair, change nothing")
	if help, err := parseFlags(fs, args, stdout); help || err != nil {
		return err
	}
	if !*once {
		return errors.New("reconcile: pass --once (a running server schedules reconcile itself)")
	}
	app, err := openToolApp(ctx, getenv, "reconcile --once", "POST /api/v1/reconcile/runs or the console's Run now")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, app.Close()) }()
	run, err := app.Reconciler.RunOnce(ctx, reconcile.TriggerCLI, *dryRun)
	if err != nil {
		return err
	}
	if err := reconcile.PrintRun(stdout, run); err != nil {
		return err
	}
	if !run.OK() {
		return fmt.Errorf("reconcile run %d ended %s", run.ID, run.Status)
	}
	return nil
}

func seatsRebuild(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) (err error) {
	if len(args) == 0 || args[0] != "rebuild" {
		return errors.New("usage: seatflow seats rebuild")
	}
	if help, err := parseFlags(flag.NewFlagSet("seats rebuild", flag.ContinueOnError), args[1:], stdout); help || err != nil {
		return err
	}
	app, err := openToolApp(ctx, getenv, "seats rebuild", "a restart (the embedded seat store is rebuilt at every start)")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, app.Close()) }()
	if err := app.Engine().RebuildAllSeats(ctx); err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, "seat state rebuilt from the database")
	return err
}

// openToolApp opens the stores for a one-shot command. With the embedded
// Redis the seat state lives inside the running server, so a second process
// would only see (and "repair") an empty copy: refuse, and say what to use.
func openToolApp(ctx context.Context, getenv func(string) string, what, instead string) (*server.App, error) {
	cfg, err := server.LoadConfig(getenv)
	if err != nil {
		return nil, err
	}
	if cfg.Redis == server.Embedded {
		return nil, fmt.Errorf("%s needs a shared Redis (SEATFLOW_REDIS=redis://...); with the embedded one use %s", what, instead)
	}
	return server.OpenApp(ctx, cfg, server.NewLogger(io.Discard, cfg.LogLevel))
}

// openDB reads the configuration and opens the migrated database: all the
// commands that serve nothing need.
func openDB(ctx context.Context, getenv func(string) string) (server.Config, *store.DB, error) {
	cfg, err := server.LoadConfig(getenv)
	if err != nil {
		return cfg, nil, err
	}
	db, err := store.Open(ctx, cfg.DB)
	if err != nil {
		return cfg, nil, fmt.Errorf("SEATFLOW_DB: %w", err)
	}
	if err := db.Migrate(ctx); err != nil {
		return cfg, nil, errors.Join(fmt.Errorf("SEATFLOW_DB: migrate: %w", err), db.Close())
	}
	return cfg, db, nil
}

func printDemo(w io.Writer, cfg server.Config, d server.Demo) {
	verb := "exists"
	if d.ShowCreated {
		verb = "created"
	}
	base := "http://" + cfg.Addr
	fmt.Fprintf(w, `Demo show %s: #%d %q, %d rows x %d seats (seat ids A-1 ... %s-%d)
Try:
  curl -s -H "Authorization: Bearer $SEATFLOW_API_TOKEN" %s/api/v1/shows/%d/seats
  curl -s -X POST -H "Authorization: Bearer $SEATFLOW_API_TOKEN" -H 'Content-Type: application/json' \
    -d '{"user_id":1,"show_id":%d,"seat_ids":["A-1","A-2"]}' %s/api/v1/orders
`, verb, d.Show.ID, d.Show.Name, d.Show.Rows, d.Show.Cols, store.RowName(d.Show.Rows), d.Show.Cols,
		base, d.Show.ID, d.Show.ID, base)
	if len(d.Logins) > 0 {
		fmt.Fprintf(w, "Console: %s/console/  logins (passwords shown once):\n", base)
		for _, l := range d.Logins {
			fmt.Fprintf(w, "  %-10s password %s\n", l.User, l.Password)
		}
	} else {
		fmt.Fprintf(w, "Console: %s/console/  (staff accounts exist; add one with `seatflow staff add NAME`)\n", base)
	}
}
