package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"seatflow/core/testenv"
)

// offsetClock is the system clock moved by a fixed offset: a host whose
// time sync is off.
type offsetClock time.Duration

func (c offsetClock) Now() time.Time { return time.Now().Add(time.Duration(c)).UTC() }

// TestClockSkewAtStart: an instance whose clock is off from the database's
// by more than SEATFLOW_MAX_CLOCK_SKEW refuses to serve with one line
// naming the setting; within the limit it serves and reports its offset on
// the metric and the dashboard. On the embedded SQLite (whose clock is the
// process's) and on MariaDB (a clock of its own).
func TestClockSkewAtStart(t *testing.T) {
	dbs := map[string]func(t *testing.T) string{
		"embedded": func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "s.db") },
		"mariadb":  func(t *testing.T) string { return testenv.NewMySQLDatabase(t) },
	}
	for name, dsn := range dbs {
		t.Run(name, func(t *testing.T) {
			for _, c := range []struct {
				offset  time.Duration
				max     string
				wantErr string // "" starts; else the words after the measured offset
			}{
				{5 * time.Second, "", "ahead of the database's (limit 500ms): fix its time sync (NTP)"},
				{-2 * time.Second, "", "behind the database's (limit 500ms): fix its time sync (NTP)"},
				{5 * time.Second, "10s", ""},
				{0, "", ""},
			} {
				env := map[string]string{"SEATFLOW_DB": dsn(t), "SEATFLOW_API_TOKEN": testToken, "SEATFLOW_PAYMENT_SECRET": testSecret}
				if c.max != "" {
					env["SEATFLOW_MAX_CLOCK_SKEW"] = c.max
				}
				cfg, err := LoadConfig(mapEnv(env))
				if err != nil {
					t.Fatal(err)
				}
				cfg.Clock = offsetClock(c.offset)
				app, err := NewApp(t.Context(), cfg, NewLogger(io.Discard, slog.LevelInfo))
				if c.wantErr != "" {
					if err == nil || !strings.HasPrefix(err.Error(), "SEATFLOW_MAX_CLOCK_SKEW: this host's clock is ") ||
						!strings.HasSuffix(err.Error(), c.wantErr) || strings.Contains(err.Error(), "\n") {
						t.Fatalf("offset %v: err %v, want %q", c.offset, err, c.wantErr)
					}
					if off := skewOf(t, err); off < c.offset.Abs()-200*time.Millisecond || off > c.offset.Abs()+200*time.Millisecond {
						t.Errorf("offset %v reported as %v", c.offset, off)
					}
					continue
				}
				if err != nil {
					t.Fatalf("offset %v, max %q: %v", c.offset, c.max, err)
				}
				got := testutil.ToFloat64(app.skew.gauge)
				if d := time.Duration(got * float64(time.Second)); (d - c.offset).Abs() > 200*time.Millisecond {
					t.Errorf("offset %v: metric says %v", c.offset, d)
				}
				rec := httptest.NewRecorder()
				app.Handler.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
				if rec.Code != http.StatusOK {
					t.Errorf("offset %v within %s: readyz %d %s", c.offset, c.max, rec.Code, rec.Body)
				}
				if err := app.Close(); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// skewOf reads the offset back out of the start error.
func skewOf(t *testing.T, err error) time.Duration {
	t.Helper()
	rest := strings.TrimPrefix(err.Error(), "SEATFLOW_MAX_CLOCK_SKEW: this host's clock is ")
	d, perr := time.ParseDuration(strings.Fields(rest)[0])
	if perr != nil {
		t.Fatalf("no duration in %q", err)
	}
	return d
}

// TestClockSkewWhileRunning: a clock that drifts past the limit after the
// start makes /readyz answer 503 clock_skew, and back within it ready again.
func TestClockSkewWhileRunning(t *testing.T) {
	a := newTestApp(t)
	var drift time.Duration
	a.app.skew.clock = clockFunc(func() time.Time { return time.Now().Add(drift) })
	for _, step := range []struct {
		drift  time.Duration
		status int
	}{{100 * time.Millisecond, 200}, {-900 * time.Millisecond, 503}, {time.Second, 503}, {0, 200}} {
		drift = step.drift
		if _, err := a.app.skew.measure(context.Background()); err != nil {
			t.Fatal(err)
		}
		rec := a.do("GET", "/readyz", "")
		if rec.Code != step.status || (step.status == 503 && errorCode(t, rec) != "clock_skew") {
			t.Errorf("drift %v: readyz %d %s", step.drift, rec.Code, rec.Body)
		}
	}
}

type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }
