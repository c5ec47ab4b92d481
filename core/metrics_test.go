package core

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestExpiryPath(t *testing.T) {
	for _, c := range []struct{ reason, actor, want string }{
		{ReasonTimeout, ActorSystem, PathTimeout},
		{ReasonReconcile, ActorSweep, PathSweep},
		{ReasonReconcile, "reconcile", PathReconcile},
		{ReasonCustomer, "user:7", ""},
		{ReasonStaff, "staff:ann", ""},
		{ReasonStaff, ActorSweep, ""},
	} {
		if got := ExpiryPath(c.reason, c.actor); got != c.want {
			t.Errorf("ExpiryPath(%q, %q) = %q, want %q", c.reason, c.actor, got, c.want)
		}
	}
}

// TestOverdueCollector: the gauge is the count of the scrape; a failed
// count leaves it out and is counted, and the scrape still succeeds.
func TestOverdueCollector(t *testing.T) {
	n, fail := 3, false
	c := NewOverdueCollector(func(ctx context.Context) (int, error) {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("the count has no deadline")
		}
		if fail {
			return 0, errors.New("database down")
		}
		return n, nil
	})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	gather := func() map[string]float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, mf := range mfs {
			m := mf.GetMetric()[0]
			out[mf.GetName()] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
		return out
	}
	if got := gather(); len(got) != 2 || got["seatflow_orders_overdue"] != 3 || got["seatflow_orders_overdue_errors_total"] != 0 {
		t.Errorf("scrape %v, want overdue 3, errors 0", got)
	}
	fail = true
	if got := gather(); len(got) != 1 || got["seatflow_orders_overdue_errors_total"] != 1 {
		t.Errorf("scrape with a failed count %v, want only errors 1", got)
	}
}

// TestZeroHops: the hop counter has a series at 0 for every level the
// policy can choose, and only those: level 0 for exact timers, 1..n for a
// table of n levels.
func TestZeroHops(t *testing.T) {
	for _, c := range []struct {
		name   string
		policy DelayPolicy
		want   []string
	}{
		{"timer", DelayPolicy{Mode: DelayTimer}, []string{"0"}},
		{"levels", DelayPolicy{Mode: DelayLevels, Levels: []time.Duration{time.Second, 5 * time.Second, time.Minute}},
			[]string{"1", "2", "3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			m := NewMetrics(reg)
			m.zeroHops(c.policy)
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, mf := range mfs {
				if mf.GetName() != "seatflow_timeout_hops_total" {
					continue
				}
				for _, s := range mf.GetMetric() {
					if s.GetCounter().GetValue() != 0 {
						t.Errorf("level %s starts at %v", s.GetLabel()[0].GetValue(), s.GetCounter().GetValue())
					}
					got = append(got, s.GetLabel()[0].GetValue())
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("levels %v, want %v", got, c.want)
			}
		})
	}
}
