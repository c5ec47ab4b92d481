package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"seatflow/core"
)

// checkAPIResponse fails unless rec is a client-facing answer: never a 5xx,
// always JSON, and every error in the documented shape.
func checkAPIResponse(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code >= 500 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if rec.Code >= 400 {
		errorCode(t, rec)
		return
	}
	if !json.Valid(rec.Body.Bytes()) {
		t.Fatalf("status %d with a non-JSON body %q", rec.Code, rec.Body)
	}
}

func serve(t *testing.T, a *testApp, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	req.Header.Set("Authorization", "Bearer "+testToken)
	rec := httptest.NewRecorder()
	a.app.Handler.ServeHTTP(rec, req)
	return rec
}

func FuzzPlaceOrderDecode(f *testing.F) {
	a := newTestApp(f)
	for _, seed := range []string{
		``, `{}`, `null`, `[]`, `"x"`, `{"user_id":1}`,
		fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":["A-1"]}`, a.show.ID),
		fmt.Sprintf(`{"user_id":2,"show_id":%d,"seat_ids":["A-1","A-1"]}`, a.show.ID),
		`{"user_id":-1,"show_id":1e400,"seat_ids":[null]}`,
		`{"user_id":1,"show_id":1,"seat_ids":["A-1"]}{}`,
		`{"user_id":1,"user_id":2,"show_id":1,"seat_ids":["\u0000"]}`,
		"{\"seat_ids\":[\"\xff\xfe\"]}",
		`{"user_id":1,"USER_ID":2,"show_id":1,"seat_ids":["A-1"]}`,
		`{"User_Id":1,"show_id":1,"seat_ids":["A-1"]}`,
		`{"user_id":1,"show_id":1,"seat_ids":["A-1"],"customer":{"name":"A","Name":"B"}}`,
		`{"user_id":1,"show_id":1,"seat_ids":["A-1"],"customer":{"name":"A\u202eB","email":"a@b"}}`,
		`{"user_id":1,"show_id":1,"seat_ids":[],"seat_ids":["A-1"]}`,
		`{"user_id":1,"show_id":1,"seat_ids":["A-1"],"\u0075ser_id":2}`,
		`{"user_id":1,"show_id":1,"seat_ids":["A-1"],"user_\u0130d":2}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req placeOrderRequest
		if err := decodeJSON(body, &req); err != nil && core.ErrorKind(err) != core.KindInvalid {
			t.Fatalf("decode error %v is not invalid_request", err)
		}
		rec := serve(t, a, httptest.NewRequestWithContext(t.Context(), "POST", "/api/v1/orders", bytes.NewReader(body)))
		checkAPIResponse(t, rec)
	})
}

func FuzzPaymentCallback(f *testing.F) {
	a := newTestApp(f)
	no := func() string {
		rec := a.do("POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":["A-1"]}`, a.show.ID))
		return decode(f, rec)["order_no"].(string)
	}()
	for _, seed := range []struct {
		body    string
		ts, sig string
		signIt  bool
	}{
		{fmt.Sprintf(`{"order_no":%q,"txn_id":"T1","amount_cents":1500}`, no), "", "", true},
		{fmt.Sprintf(`{"order_no":%q,"txn_id":"T2","amount_cents":1}`, no), "", "", true},
		{`{"order_no":"SF1","txn_id":"T3","amount_cents":1,"paid_at":"2026-13-45T99:00:00Z"}`, "", "", true},
		{`{"order_no":"","txn_id":"","amount_cents":-1}`, "", "", true},
		{`not json`, "", "", true},
		{`{}`, "1700000000", "00", false},
		{`{}`, "-9223372036854775808", "", false},
		{`{}`, "99999999999999999999", "zz", false},
	} {
		f.Add([]byte(seed.body), seed.ts, seed.sig, seed.signIt)
	}
	f.Fuzz(func(t *testing.T, body []byte, ts, sig string, signIt bool) {
		if signIt {
			ts = strconv.FormatInt(time.Now().Unix(), 10)
			sig = sign(testSecret, ts, string(body))
		}
		req := httptest.NewRequestWithContext(t.Context(), "POST", "/api/v1/payments/callback", bytes.NewReader(body))
		req.Header.Set("X-SeatFlow-Timestamp", ts)
		req.Header.Set("X-SeatFlow-Signature", sig)
		rec := serve(t, a, req)
		checkAPIResponse(t, rec)
		if !signIt && rec.Code != http.StatusUnauthorized {
			t.Fatalf("unsigned callback got %d: %s", rec.Code, rec.Body)
		}
	})
}

// FuzzBlockDecode: whatever the body, decoding a block request either
// succeeds or is an invalid_request, never a panic. (Free text is checked
// by text.Check, fuzzed in core.)
func FuzzBlockDecode(f *testing.F) {
	for _, seed := range []string{
		`{"seat_ids":["A-1"],"reason":"broken"}`,
		`{"seat_ids":["A-1"],"reason":"\u202erefund\u202c"}`,
		`{"seat_ids":["A-1"],"reason":"a\u0000b\u001bc\u0085d\u2066e"}`,
		`{"seat_ids":["A-1"],"reason":"x","reason":"y"}`,
		`{"seat_ids":["A-1"],"Reason":"x"}`,
		`{"seat_ids":["A-1"],"REASON":"x","reason":"y"}`,
		"{\"seat_ids\":[\"A-1\"],\"reason\":\"\xe2\x80\xae\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req blockRequest
		err := decodeJSON(body, &req)
		if err != nil && core.ErrorKind(err) != core.KindInvalid {
			t.Fatalf("decode error %v is not invalid_request", err)
		}
	})
}
