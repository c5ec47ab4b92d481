package server

import (
	"strconv"
	"strings"
	"time"

	"seatflow/core"
)

// retention reads the SEATFLOW_RETENTION_* settings over core.DefaultRetention
// and fails on the first value out of range (one line, naming the variable).
func (p *envParser) retention() core.Retention {
	r := core.DefaultRetention
	r.OrderEvents = p.days("SEATFLOW_RETENTION_ORDER_EVENTS", r.OrderEvents)
	r.ShowGrace = p.days("SEATFLOW_RETENTION_SHOW_GRACE", r.ShowGrace)
	r.Every = p.positiveDuration("SEATFLOW_RETENTION_EVERY", r.Every)
	r.Batch = p.positiveInt("SEATFLOW_RETENTION_BATCH", r.Batch)
	if err := r.Validate(); err != nil && p.err == nil {
		p.fail("SEATFLOW_RETENTION_*", "", err.Error())
	}
	return r
}

// days reads a duration given as days ("90d") or as a Go duration ("2160h").
func (p *envParser) days(name string, def time.Duration) time.Duration {
	v := strings.TrimSpace(p.getenv(name))
	if n, ok := strings.CutSuffix(v, "d"); ok && v != "" {
		d, err := strconv.Atoi(n)
		if err != nil || d <= 0 {
			p.fail(name, v, "want a number of days such as 90d, or a duration such as 2160h")
			return def
		}
		return time.Duration(d) * 24 * time.Hour
	}
	return p.positiveDuration(name, def)
}

// retentionPolicy is c.Retention, or the defaults for a Config built in
// code without one (LoadConfig always sets it).
func (c Config) retentionPolicy() core.Retention {
	if c.Retention == (core.Retention{}) {
		return core.DefaultRetention
	}
	return c.Retention
}
