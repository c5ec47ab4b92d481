package core

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the engine's Prometheus collectors, registered on a private
// registry by the caller (no global registry).
type Metrics struct {
	OrdersPlaced     prometheus.Counter
	PlaceRejected    *prometheus.CounterVec // reason: seat_unavailable|purchase_limit|db_conflict
	OrdersEnded      *prometheus.CounterVec // status, reason
	TimeoutFired     *prometheus.CounterVec // outcome: ignored|rearmed|cancelled
	TimeoutSendFail  prometheus.Counter
	RearmHops        *prometheus.CounterVec // level
	Payments         *prometheus.CounterVec // result
	Discrepancies    *prometheus.CounterVec // kind
	SeatStoreFailure *prometheus.CounterVec // op: release|sell|compensate
	CancelLateness   *prometheus.HistogramVec
}

// NewMetrics creates the collectors and registers them on reg (nil: unregistered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		OrdersPlaced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seatflow_orders_placed_total", Help: "Orders placed (seats locked and order committed)."}),
		PlaceRejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_place_rejected_total", Help: "Placements rejected, by reason."}, []string{"reason"}),
		OrdersEnded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_orders_ended_total", Help: "Orders that left pending, by final status and reason."}, []string{"status", "reason"}),
		TimeoutFired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_timeout_messages_total", Help: "Timeout messages handled, by outcome."}, []string{"outcome"}),
		TimeoutSendFail: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seatflow_timeout_send_failures_total", Help: "Timeout messages that could not be sent (reconcile recovers the order)."}),
		RearmHops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_timeout_hops_total", Help: "Timeout messages sent, by delay level (0 = exact timer)."}, []string{"level"}),
		Payments: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_payments_total", Help: "Payment callbacks, by result."}, []string{"result"}),
		Discrepancies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_discrepancies_total", Help: "Payments that could not be applied, by kind."}, []string{"kind"}),
		SeatStoreFailure: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_seat_store_failures_total", Help: "Seat-store writes that failed after a DB commit, by operation (reconcile repairs them)."}, []string{"op"}),
		CancelLateness: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "seatflow_expiry_lag_seconds",
			Help:    "Time from expire_time to the cancel of an expired order, by the path that cancelled it.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 2.5, 5, 10, 30, 60, 300, 900},
		}, []string{"path"}),
	}
	if reg != nil {
		reg.MustRegister(m.OrdersPlaced, m.PlaceRejected, m.OrdersEnded, m.TimeoutFired, m.TimeoutSendFail,
			m.RearmHops, m.Payments, m.Discrepancies, m.SeatStoreFailure, m.CancelLateness)
	}
	return m
}
