package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"seatflow/core"
	"seatflow/core/stacktest"
)

// orderReadFails fails every order read: the handler must ask for redelivery.
type orderReadFails struct{ core.Store }

func (orderReadFails) Order(context.Context, string) (core.Order, error) {
	return core.Order{}, errors.New("injected: database down")
}

// TestTimeoutHandleSeconds: the consumer's handler observes every message
// it handles once, under the outcome it had and the queue it came from.
func TestTimeoutHandleSeconds(t *testing.T) {
	outcomes := []string{core.OutcomeIgnored, core.OutcomeRearmed, core.OutcomeCancelled,
		core.OutcomeResent, core.OutcomeDeferred, core.OutcomeFailed}
	for _, tt := range []struct {
		name    string
		failing bool // the store cannot read orders
		// msg places what the case needs and returns the message delivered.
		msg     func(t *testing.T, eng *core.Engine, clock *stacktest.Clock, show core.Show) core.TimeoutMsg
		want    string
		wantErr bool
	}{
		{"unknown order", false, func(*testing.T, *core.Engine, *stacktest.Clock, core.Show) core.TimeoutMsg {
			return core.TimeoutMsg{OrderNo: "SF-none", Hop: 1}
		}, core.OutcomeIgnored, false},
		{"hold not yet expired", false, func(t *testing.T, eng *core.Engine, clock *stacktest.Clock, show core.Show) core.TimeoutMsg {
			o := placeOne(t, eng, show)
			clock.Advance(time.Minute)
			return core.TimeoutMsg{OrderNo: o.OrderNo, Hop: 1}
		}, core.OutcomeRearmed, false},
		{"hold expired", false, func(t *testing.T, eng *core.Engine, clock *stacktest.Clock, show core.Show) core.TimeoutMsg {
			o := placeOne(t, eng, show)
			clock.Advance(16 * time.Minute)
			return core.TimeoutMsg{OrderNo: o.OrderNo, Hop: 1}
		}, core.OutcomeCancelled, false},
		{"delivered long before due", false, func(t *testing.T, eng *core.Engine, clock *stacktest.Clock, show core.Show) core.TimeoutMsg {
			o := placeOne(t, eng, show)
			return core.TimeoutMsg{OrderNo: o.OrderNo, Hop: 1, DueAt: clock.Now().Add(10 * time.Minute)}
		}, core.OutcomeDeferred, false},
		{"store down", true, func(*testing.T, *core.Engine, *stacktest.Clock, core.Show) core.TimeoutMsg {
			return core.TimeoutMsg{OrderNo: "SF-any", Hop: 1}
		}, core.OutcomeFailed, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := stacktest.Embedded(t)
			show := st.NewShow(t, 2, 2)
			clock := stacktest.NewClock(time.Now())
			metrics := core.NewMetrics(prometheus.NewRegistry())
			var store core.Store = st.DB
			if tt.failing {
				store = orderReadFails{st.DB}
			}
			eng, err := core.NewEngine(core.Config{HoldTTL: 15 * time.Minute, PurchaseLimit: 4, Delay: core.DefaultDelayPolicy()},
				core.Deps{Store: store, Seats: st.Seats, Queue: st.Queue, Clock: clock, Metrics: metrics})
			if err != nil {
				t.Fatal(err)
			}
			handle := eng.TimeoutHandler(core.DeadLetterRocketMQ)
			msg := tt.msg(t, eng, clock, show)
			if err := handle(t.Context(), []core.TimeoutMsg{msg})[0]; (err != nil) != tt.wantErr {
				t.Fatalf("handler error %v, want error %v", err, tt.wantErr)
			}
			for _, o := range outcomes {
				want := 0
				if o == tt.want {
					want = 1
				}
				h := metrics.TimeoutHandle.WithLabelValues(o, core.DeadLetterRocketMQ).(prometheus.Histogram)
				if got := histogramCount(t, h); got != want {
					t.Errorf("seatflow_timeout_handle_seconds{outcome=%q} count %d, want %d", o, got, want)
				}
			}
			if n := testutil.CollectAndCount(metrics.TimeoutHandle); n != len(outcomes) {
				t.Errorf("%d series, want one per outcome for the one queue (%d)", n, len(outcomes))
			}
		})
	}
}

func placeOne(t *testing.T, eng *core.Engine, show core.Show) core.Order {
	t.Helper()
	o, err := eng.Place(t.Context(), core.PlaceRequest{UserID: 1, ShowID: show.ID, SeatIDs: []string{"A-1"}})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func histogramCount(t *testing.T, h prometheus.Histogram) int {
	t.Helper()
	var m dto.Metric
	if err := h.Write(&m); err != nil {
		t.Fatal(err)
	}
	return int(m.GetHistogram().GetSampleCount())
}
