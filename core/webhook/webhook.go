// Package webhook sends the engine's webhook events (core.WebhookEvent) to
// the storefront's SEATFLOW_WEBHOOK_URL.
//
// The engine writes each event into the webhook_outbox table in the
// transaction of the change it reports; a Dispatcher polls the table and
// POSTs each due event as JSON {"id","kind","at","data"} (the bytes Encode
// stored, the same on every attempt), signed as the payment callback is:
//
//	X-SeatFlow-Event-Id:  the event's id
//	X-SeatFlow-Timestamp: unix seconds of the sending
//	X-SeatFlow-Signature: hex HMAC-SHA256(secret, timestamp + "." + raw body)
//
// A 2xx answer marks the event delivered. Anything else (another status, a
// redirect, a timeout, no connection) is retried after a backoff that
// doubles from 1 s to 10 min, with jitter. Delivery is at least once, in no
// particular order: the receiver drops an event id it has seen (an event is
// sent again when its 2xx answer was lost, or the dispatcher died before
// recording it), and orders events by "at" if it cares. Several instances
// may dispatch from one database: each claims the rows it sends, so no
// event is being sent by two at the same moment.
package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"seatflow/core"
)

// Headers of a webhook request; the timestamp and signature are the
// payment callback's (server/api_payments.go).
const (
	HeaderEventID   = "X-SeatFlow-Event-Id"
	HeaderTimestamp = "X-SeatFlow-Timestamp" // unix seconds
	HeaderSignature = "X-SeatFlow-Signature" // hex HMAC-SHA256(secret, timestamp + "." + raw body)
)

// Bounds of a stored event: the widths of webhook_outbox's event_id and kind
// columns, and of its payload (a MySQL TEXT).
const (
	MaxIDLen    = 64
	MaxKindLen  = 64
	MaxBodySize = 65535
)

// body is the request body: the event as the storefront reads it.
type body struct {
	ID   string         `json:"id"`
	Kind string         `json:"kind"`
	At   time.Time      `json:"at"`
	Data map[string]any `json:"data"`
}

// Encode is ev's request body, stored with the event so every attempt sends
// the same bytes. It refuses what the outbox cannot keep or a receiver
// could not use: no id, no kind, no time, data that is not JSON.
func Encode(ev core.WebhookEvent) ([]byte, error) {
	switch {
	case ev.ID == "" || len(ev.ID) > MaxIDLen:
		return nil, fmt.Errorf("webhook event id %q: want 1 to %d bytes", ev.ID, MaxIDLen)
	case ev.Kind == "" || len(ev.Kind) > MaxKindLen:
		return nil, fmt.Errorf("webhook event %s: kind %q: want 1 to %d bytes", ev.ID, ev.Kind, MaxKindLen)
	case ev.At.IsZero():
		return nil, fmt.Errorf("webhook event %s: no time", ev.ID)
	}
	data := ev.Data
	if data == nil {
		data = map[string]any{}
	}
	b, err := json.Marshal(body{ID: ev.ID, Kind: ev.Kind, At: ev.At.UTC(), Data: data})
	if err != nil {
		return nil, fmt.Errorf("webhook event %s: encode: %w", ev.ID, err)
	}
	if len(b) > MaxBodySize {
		return nil, fmt.Errorf("webhook event %s: body of %d bytes: at most %d", ev.ID, len(b), MaxBodySize)
	}
	return b, nil
}

// Sign is the X-SeatFlow-Signature of body sent with X-SeatFlow-Timestamp
// timestamp (its text, as sent): what a receiver compares, in constant time,
// with the header.
func Sign(secret, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp + "."))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// CheckURL accepts an absolute http or https URL with a host: where events
// can be POSTed.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("not a URL: %v", errCause(err))
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("want an absolute http:// or https:// URL (scheme %q)", u.Scheme)
	case u.Hostname() == "":
		return fmt.Errorf("the URL has no host")
	}
	return nil
}

// errCause is a url.Error's cause, without the URL it quotes again.
func errCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Pending is an outbox row a dispatcher has claimed.
type Pending struct {
	ID       int64 // the row
	EventID  string
	Kind     string
	Body     []byte // Encode's bytes
	Attempts int    // attempts made before this claim
}

// Backlog is what the outbox holds undelivered.
type Backlog struct {
	Undelivered int
	Oldest      time.Time // the oldest undelivered event's time; zero when none
}

// Outbox is the webhook_outbox table, as core/store keeps it.
type Outbox interface {
	// ClaimWebhooks claims up to n undelivered events due at now, lowest
	// row first, by moving their next attempt to until: no other claim
	// takes them before then. Atomic across instances sharing the database.
	ClaimWebhooks(ctx context.Context, now, until time.Time, n int) ([]Pending, error)
	// MarkWebhookDelivered counts the attempt and marks the event
	// delivered at at, unless it is already.
	MarkWebhookDelivered(ctx context.Context, id int64, at time.Time) error
	// MarkWebhookFailed counts the failed attempt, keeps its error and
	// makes the event due again at next, only while the claim that ends at
	// claimedUntil still holds it (a claim that ran out is another's now).
	MarkWebhookFailed(ctx context.Context, id int64, claimedUntil, next time.Time, lastErr string) error
	// WebhookBacklog counts the undelivered events.
	WebhookBacklog(ctx context.Context) (Backlog, error)
}
