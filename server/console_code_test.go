package server

import (
	"strings"
	"testing"
	"time"

	"seatflow/core/access"
)

// TestConsoleShowsOrderCode: the customer's 8-character code, what they
// read out at the counter, is beside the order number wherever a clerk
// meets a hold: the order page's title, heading and summary, the holds
// list and the dashboard's holds expiring soon.
func TestConsoleShowsOrderCode(t *testing.T) {
	env := newConsoleEnv(t)
	o := env.place(95, "B-2")
	// A hold of 15 minutes, 11 of them gone: the dashboard lists it as
	// expiring soon.
	env.clock.Advance(11 * time.Minute)
	if len(o.Code) != 8 {
		t.Fatalf("order code %q", o.Code)
	}
	bo := env.login(access.RoleBoxOffice)
	for _, tc := range []struct {
		page string
		want []string
	}{
		{"/console/orders/" + o.OrderNo, []string{
			"<title>Order " + o.Code + " · SeatFlow</title>",
			`<code class="order-code" id="order-code">` + o.Code + `</code> <small class="order-no"><code id="order-no">` + o.OrderNo,
			`<dt>Code</dt><dd><code class="order-code" id="summary-code">` + o.Code + `</code></dd><dt>Order no</dt><dd><code>` + o.OrderNo,
		}},
		{"/console/holds", []string{
			`<tr id="hold-` + o.OrderNo + `"><td><a href="/console/orders/` + o.OrderNo + `"><code class="order-code">` + o.Code +
				`</code></a></td><td><a href="/console/orders/` + o.OrderNo + `">` + o.OrderNo + `</a></td>`,
		}},
		{"/console/", []string{
			`<li id="expiring-` + o.OrderNo + `"><a href="/console/orders/` + o.OrderNo + `"><code class="order-code">` + o.Code +
				`</code></a> <small class="order-no">` + o.OrderNo + `</small>`,
		}},
	} {
		page := bo.do("GET", tc.page, nil, nil).Body.String()
		for _, want := range tc.want {
			if !strings.Contains(page, want) {
				t.Errorf("%s lacks %s", tc.page, want)
			}
		}
	}
}
