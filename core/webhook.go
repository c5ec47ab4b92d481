package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"
)

// Webhook events tell the storefront what the engine did for its buyers
// (a waiting-list offer made or expired). The engine writes them in the
// transaction of the change they report, into an outbox in the same
// database, so an event is sent if and only if its change committed;
// core/webhook delivers them (SEATFLOW_WEBHOOK_URL) at least once.

// WebhookEvent is one event for the storefront's webhook, written in the transaction of the change it reports.
type WebhookEvent struct {
	ID   string // NewWebhookEventID: receivers drop an id they have seen
	Kind string // e.g. "waitlist.offered"; kinds are the engine's, not listed here
	At   time.Time
	Data map[string]any // the body's "data" object; nil sends {}
}

// WebhookTx is what the engine's transactions write webhook events with.
type WebhookTx interface {
	// AddWebhookEvents queues evs for delivery; an id queued before fails
	// the call (and with it the transaction).
	AddWebhookEvents(ctx context.Context, evs []WebhookEvent) error
}

// NewWebhookEventID returns a random event id, "evt_" and 24 hex digits:
// unguessable, and unique without asking the database.
func NewWebhookEventID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return "evt_" + hex.EncodeToString(b[:])
}
