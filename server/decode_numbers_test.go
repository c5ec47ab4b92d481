package server

import (
	"testing"

	"seatflow/core"
)

// A whole number written with a fraction or an exponent is an integer, as
// the document's JSON Schema says; a fraction is still refused.
func TestDecodeWholeNumbers(t *testing.T) {
	for _, tc := range []struct {
		body    string
		user    int64
		minutes int
		refused bool
	}{
		{`{"user_id":841,"minutes":5}`, 841, 5, false},
		{`{"user_id":841.0,"minutes":5}`, 841, 5, false},
		{`{"user_id":8.41e2,"minutes":5.000}`, 841, 5, false},
		{`{"user_id":84100E-2,"minutes":5, "reason":"1.0e3"}`, 841, 5, false},
		{`{"user_id":841.5,"minutes":5}`, 0, 0, true},
		{`{"user_id":1e999999999,"minutes":5}`, 0, 0, true},
		{`{"user_id":1e19,"minutes":5}`, 0, 0, true},
		{`{"user_id":841.0,"minutes":5} {}`, 0, 0, true},
		{`{"user_id":841.0,"user_id":1.0,"minutes":5}`, 0, 0, true},
	} {
		var req extendOrderRequest
		err := decodeJSON([]byte(tc.body), &req)
		switch {
		case tc.refused && (err == nil || core.ErrorKind(err) != core.KindInvalid):
			t.Errorf("%s: decoded %+v, %v; want invalid_request", tc.body, req, err)
		case !tc.refused && (err != nil || req.UserID != tc.user || req.Minutes != tc.minutes):
			t.Errorf("%s: decoded %+v, %v; want user %d, minutes %d", tc.body, req, err, tc.user, tc.minutes)
		}
	}
	var req extendOrderRequest
	if err := decodeJSON([]byte(`{"user_id":1,"minutes":1,"reason":"1.0e3 <b>"}`), &req); err != nil || req.Reason != "1.0e3 <b>" {
		t.Errorf("reason %q (%v), want the text as sent", req.Reason, err)
	}
}
