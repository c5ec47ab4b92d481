package server

import (
	"fmt"
	"os"
	"strings"

	"seatflow/core/webhook"
)

// WebhookConfig is the storefront's webhook (core/webhook): where events go
// and the secret they are signed with. A zero one: no webhook.
type WebhookConfig struct {
	URL    string // SEATFLOW_WEBHOOK_URL: an absolute http or https URL
	Secret Secret // SEATFLOW_WEBHOOK_SECRET, or the file SEATFLOW_WEBHOOK_SECRET_FILE names
}

// webhook reads SEATFLOW_WEBHOOK_URL and its secret (SEATFLOW_WEBHOOK_SECRET
// or SEATFLOW_WEBHOOK_SECRET_FILE, one of them, required with the URL). A
// secret is never generated: the storefront must know it. A secret without
// a URL is refused too: a misspelt URL variable would otherwise turn the
// webhook off without a word.
func (p *envParser) webhook() WebhookConfig {
	var c WebhookConfig
	if v := strings.TrimSpace(p.getenv("SEATFLOW_WEBHOOK_URL")); v != "" {
		p.check("SEATFLOW_WEBHOOK_URL", v, webhook.CheckURL)
		c.URL = v
	}
	v, file := p.getenv("SEATFLOW_WEBHOOK_SECRET"), strings.TrimSpace(p.getenv("SEATFLOW_WEBHOOK_SECRET_FILE"))
	switch {
	case v != "" && file != "":
		p.fail("SEATFLOW_WEBHOOK_SECRET_FILE", file, "set SEATFLOW_WEBHOOK_SECRET or SEATFLOW_WEBHOOK_SECRET_FILE, not both")
	case v != "":
		c.Secret, _ = p.secret("SEATFLOW_WEBHOOK_SECRET")
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			p.fail("SEATFLOW_WEBHOOK_SECRET_FILE", file, err.Error())
			break
		}
		if c.Secret = Secret(strings.TrimSpace(string(b))); len(c.Secret) < minSecretLen {
			p.fail("SEATFLOW_WEBHOOK_SECRET_FILE", file, fmt.Sprintf("the secret in it must be at least %d characters", minSecretLen))
		}
	}
	switch {
	case c.URL != "" && c.Secret == "" && v == "" && file == "":
		p.fail("SEATFLOW_WEBHOOK_SECRET", "", "required with SEATFLOW_WEBHOOK_URL (or SEATFLOW_WEBHOOK_SECRET_FILE): the storefront verifies every request with it")
	case c.URL == "" && (v != "" || file != ""):
		p.fail("SEATFLOW_WEBHOOK_URL", "", "a webhook secret is set but no URL to send to")
	}
	return c
}
