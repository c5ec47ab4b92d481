package server

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// storeDownGauge exports what the health watcher's last probe found:
// seatflow_store_down{store} is 1 while that store does not answer, so an
// outage alerts without waiting for requests to fail.
type storeDownGauge struct{ g *prometheus.GaugeVec }

func newStoreDownGauge(reg prometheus.Registerer) storeDownGauge {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "seatflow_store_down",
		Help: "1 while the last probe (every 5 s, every 1 s while one is down) found the store not answering."},
		[]string{"store"})
	reg.MustRegister(g)
	for _, s := range []string{storeDatabase, storeSeats, storeDelayQueue} {
		g.WithLabelValues(storeLabel(s))
	}
	return storeDownGauge{g}
}

// set records one probe: down names the stores that did not answer.
func (s storeDownGauge) set(down []string) {
	for _, name := range []string{storeDatabase, storeSeats, storeDelayQueue} {
		v := 0.0
		for _, d := range down {
			if d == name {
				v = 1
			}
		}
		s.g.WithLabelValues(storeLabel(name)).Set(v)
	}
}

// storeLabel is a store's banner name as a label value: "seat store" → "seat_store".
func storeLabel(name string) string { return strings.ReplaceAll(name, " ", "_") }
