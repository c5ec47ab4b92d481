package core_test

import (
	"context"
	"testing"

	"seatflow/core"
	"seatflow/core/stacktest"
)

// TestOrderNoNormalized: every handler resolves an order reference with
// Engine.OrderNo, which spells an order number typed in another case as
// stored (issue 28 item 2) and leaves anything else to the lookup.
func TestOrderNoNormalized(t *testing.T) {
	eng := stacktest.Embedded(t).Engine(t, core.Config{}, nil)
	for _, tc := range []struct{ in, want string }{
		{"SF20261206210000a1b2c3d4e5f6", "SF20261206210000a1b2c3d4e5f6"},
		{"SF20261206210000A1B2C3D4E5F6", "SF20261206210000a1b2c3d4e5f6"},
		{"sf20261206210000A1b2C3d4E5f6", "SF20261206210000a1b2c3d4e5f6"},
		{"SF20261206210000a1b2c3d4e5f", "SF20261206210000a1b2c3d4e5f"},     // too short: not an order number
		{"SF20261206210000a1b2c3d4e5fG", "SF20261206210000a1b2c3d4e5fG"},   // not hex
		{" SF20261206210000a1b2c3d4e5f6", " SF20261206210000a1b2c3d4e5f6"}, // not ours to trim: not found
		{"SF-NO-SUCH-ORDER", "SF-NO-SUCH-ORDER"},
	} {
		got, err := eng.OrderNo(context.Background(), tc.in)
		if err != nil || got != tc.want {
			t.Errorf("OrderNo(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
