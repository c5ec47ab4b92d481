package web

import "seatflow/core/access"

// APIKeysData is the API keys page.
type APIKeysData struct {
	Keys []access.APIKey
	// NewKey is the secret of the key just added: shown on this response
	// only, never stored.
	NewKey string
	// The add form, when it was sent and refused.
	Name      string
	FormError string // the refusal's message
}
