package bench

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// clientIPHeader names the end user's address; the bench's key (the
// bootstrap token) holds the client_ip right (server/abuse.go).
const clientIPHeader = "X-SeatFlow-Client-IP"

// apiClient speaks the JSON API of issue 2 to the server under test.
type apiClient struct {
	base   string // http://127.0.0.1:port
	token  string
	secret string
	hc     *http.Client
}

func newAPIClient(base, token, secret string, clients int) *apiClient {
	tr := &http.Transport{
		// One kept-alive connection per client: a new TCP connection per
		// request would measure the kernel, not SeatFlow.
		MaxIdleConns:        clients + 8,
		MaxIdleConnsPerHost: clients + 8,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	return &apiClient{base: base, token: token, secret: secret, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

func (c *apiClient) close() { c.hc.CloseIdleConnections() }

// apiError is a non-2xx answer: the status and the body's error object.
type apiError struct {
	Status int
	// RetryAfter is the answer's Retry-After (503, 429), 0 when absent.
	RetryAfter time.Duration
	Code       string      `json:"code"`
	Msg        string      `json:"message"`
	Seats      []string    `json:"seats"`
	Left       []seatsLeft `json:"left"` // not_enough_seats: what is left per category
	Detail     struct {
		First *struct { // already_checked_in: the admitting scan
			At   time.Time `json:"at"`
			Gate string    `json:"gate"`
		} `json:"first"`
	} `json:"detail"`
}

func (e *apiError) Error() string {
	return fmt.Sprintf("HTTP %d %s: %s", e.Status, e.Code, e.Msg)
}

// do sends one request and decodes a 2xx body into out, or returns an *apiError.
func (c *apiClient) do(ctx context.Context, method, path string, body []byte, header http.Header, out any) error {
	_, err := c.doStatus(ctx, method, path, body, header, out)
	return err
}

// doStatus is do that also returns the answer's status (0 when there was none).
func (c *apiClient) doStatus(ctx context.Context, method, path string, body []byte, header http.Header, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: read body: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		var eb struct {
			Error apiError `json:"error"`
		}
		_ = json.Unmarshal(raw, &eb) // a body that is not JSON still leaves the status
		eb.Error.Status = resp.StatusCode
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			eb.Error.RetryAfter = time.Duration(secs) * time.Second
		}
		return resp.StatusCode, &eb.Error
	}
	if out == nil {
		return resp.StatusCode, nil
	}
	if rb, ok := out.(*[]byte); ok { // the caller reads the body itself
		*rb = raw
		return resp.StatusCode, nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: decode %q: %w", method, path, raw, err)
	}
	return resp.StatusCode, nil
}

// ready reports whether /readyz answers 200.
func (c *apiClient) ready(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/readyz", nil, nil, nil)
}

// placed is the part of a 201 from POST /api/v1/orders the bench uses.
type placed struct {
	OrderNo     string `json:"order_no"`
	AmountCents int64  `json:"amount_cents"`
}

// place asks for seats; a 409 comes back as an *apiError listing the taken seats.
func (c *apiClient) place(ctx context.Context, userID, showID int64, seatIDs []string) (placed, error) {
	var p placed
	err := c.do(ctx, http.MethodPost, "/api/v1/orders", orderBody(userID, showID, seatIDs, ""), nil, &p)
	return p, err
}

// orderBody is the body of POST /api/v1/orders; admission is left out when
// empty (a show without a queue).
func orderBody(userID, showID int64, seatIDs []string, admission string) []byte {
	type order struct {
		UserID    int64    `json:"user_id"`
		ShowID    int64    `json:"show_id"`
		SeatIDs   []string `json:"seat_ids"`
		Admission string   `json:"admission,omitempty"`
	}
	body, _ := json.Marshal(order{userID, showID, seatIDs, admission}) // cannot fail: strings and numbers
	return body
}

// pay sends one signed payment callback and returns its result
// (paid, duplicate or discrepancy).
func (c *apiClient) pay(ctx context.Context, orderNo, txnID string, amountCents int64, now time.Time) (string, error) {
	body, err := json.Marshal(map[string]any{"order_no": orderNo, "txn_id": txnID, "amount_cents": amountCents,
		"paid_at": now.UTC().Format(time.RFC3339Nano)})
	if err != nil {
		return "", fmt.Errorf("encode payment: %w", err)
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	h := http.Header{}
	h.Set("X-SeatFlow-Timestamp", ts)
	h.Set("X-SeatFlow-Signature", sign(c.secret, ts, body))
	var out struct {
		Result string `json:"result"`
	}
	if err := c.do(ctx, http.MethodPost, "/api/v1/payments/callback", body, h, &out); err != nil {
		return "", err
	}
	return out.Result, nil
}

// sign is the payment gateway's signature: hex HMAC-SHA256(secret, timestamp + "." + body).
func sign(secret, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp + "."))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// seatStates returns seat id → state ("available", "locked", "sold") as the
// API shows it: the plan from the DB joined with the live state in Redis.
func (c *apiClient) seatStates(ctx context.Context, showID int64) (map[string]string, error) {
	var out seatList
	if err := c.do(ctx, http.MethodGet, seatsPath(showID), nil, nil, &out); err != nil {
		return nil, err
	}
	m := make(map[string]string, len(out.Seats))
	for _, s := range out.Seats {
		m[s.SeatID] = s.State
	}
	return m, nil
}

// seatList is the part of GET /api/v1/shows/{id}/seats the bench reads.
type seatList struct {
	Seats []struct {
		SeatID string `json:"seat_id"`
		State  string `json:"state"`
	} `json:"seats"`
}

func seatsPath(showID int64) string { return fmt.Sprintf("/api/v1/shows/%d/seats", showID) }

// isStatus reports whether err is an API answer with the given status.
func isStatus(err error, status int) (*apiError, bool) {
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == status {
		return ae, true
	}
	return nil, false
}

// counter reads an unlabelled counter from the server's /metrics (0 when
// it has no sample yet).
func (c *apiClient) counter(ctx context.Context, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET /metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("GET /metrics: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /metrics: HTTP %d", resp.StatusCode)
	}
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, nil
}
