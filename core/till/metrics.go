package till

import "github.com/prometheus/client_golang/prometheus"

// Metrics count shifts; nil counts nothing.
type Metrics struct {
	Opened prometheus.Counter
	Closed *prometheus.CounterVec // result: balanced (within the tolerance) | case
}

// NewMetrics registers the till's series on reg, every one at 0.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Opened: prometheus.NewCounter(prometheus.CounterOpts{Name: "seatflow_till_shifts_opened_total",
			Help: "Till shifts opened."}),
		Closed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "seatflow_till_shifts_closed_total",
			Help: "Till shifts closed, by result: balanced (within SEATFLOW_TILL_TOLERANCE_CENTS) or case (a till_difference case opened)."},
			[]string{"result"}),
	}
	m.Closed.WithLabelValues("balanced")
	m.Closed.WithLabelValues("case")
	reg.MustRegister(m.Opened, m.Closed)
	return m
}

func (m *Metrics) opened() {
	if m != nil {
		m.Opened.Inc()
	}
}

func (m *Metrics) closed(withCase bool) {
	if m == nil {
		return
	}
	result := "balanced"
	if withCase {
		result = "case"
	}
	m.Closed.WithLabelValues(result).Inc()
}
