package server

import (
	"cmp"
	"crypto/subtle"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/access"
)

// routeScopes is the scope each /api/v1 route needs, keyed by method and
// echo route path. A route missing here is refused to every key (and fails
// TestEveryAPIRouteHasAScope); the payment callback is not here because it
// is authenticated by its signature, not by a key, nor the queue poll,
// whose signed ticket is its credential.
var routeScopes = map[string]access.Scope{
	"GET /api/v1/shows":                    access.ScopeOrdersRead,
	"GET /api/v1/shows/:id":                access.ScopeOrdersRead,
	"GET /api/v1/shows/:id/seats":          access.ScopeOrdersRead,
	"GET /api/v1/shows/:id/availability":   access.ScopeOrdersRead,
	"POST /api/v1/shows":                   access.ScopeShowsWrite,
	"PUT /api/v1/shows/:id/plan":           access.ScopeShowsWrite,
	"GET /api/v1/shows/:id/best-available": access.ScopeOrdersRead,
	"PATCH /api/v1/shows/:id":              access.ScopeShowsWrite,
	"PUT /api/v1/shows/:id/best-available": access.ScopeShowsWrite,
	"POST /api/v1/shows/:id/blocks":        access.ScopeShowsWrite,
	"DELETE /api/v1/shows/:id/blocks":      access.ScopeShowsWrite,
	"POST /api/v1/shows/:id/cancel":        access.ScopeShowsWrite,
	"POST /api/v1/shows/:id/publish":       access.ScopeShowsWrite,
	"PUT /api/v1/shows/:id/queue":          access.ScopeShowsWrite,
	"GET /api/v1/shows/:id/queue":          access.ScopeOrdersRead,
	"POST /api/v1/shows/:id/queue":         access.ScopeOrdersWrite,
	"GET /api/v1/shows/:id/queue/entries":  access.ScopeOrdersRead,
	"PUT /api/v1/shows/:id/waitlist":       access.ScopeShowsWrite,
	"GET /api/v1/shows/:id/waitlist":       access.ScopeOrdersRead,
	"POST /api/v1/shows/:id/waitlist":      access.ScopeOrdersWrite,
	"GET /api/v1/waitlist/:entry":          access.ScopeOrdersRead,
	"DELETE /api/v1/waitlist/:entry":       access.ScopeOrdersWrite,
	"GET /api/v1/orders":                   access.ScopeOrdersRead,
	"GET /api/v1/orders/:order_no":         access.ScopeOrdersRead,
	"POST /api/v1/orders":                  access.ScopeOrdersWrite,
	"POST /api/v1/orders/:order_no/cancel": access.ScopeOrdersWrite,
	"POST /api/v1/orders/:order_no/extend": access.ScopeOrdersWrite,
	"POST /api/v1/orders/:order_no/refund": access.ScopeRefunds,
	// An exchange may give money back, as a refund does.
	"POST /api/v1/orders/:order_no/exchange": access.ScopeRefunds,
	"POST /api/v1/checkins":                  access.ScopeCheckin,
	"POST /api/v1/checkins/undo":             access.ScopeCheckin,
	"POST /api/v1/checkins/sync":             access.ScopeCheckin,
	"GET /api/v1/shows/:id/tickets":          access.ScopeCheckin,
	"GET /api/v1/reconcile/runs":             access.ScopeReconcile,
	"POST /api/v1/reconcile/runs":            access.ScopeReconcile,
}

// apiKeyTouchEvery bounds how often a key's last-used time is written: a
// busy key costs one UPDATE a minute, not one per request.
const apiKeyTouchEvery = time.Minute

// errInvalidKey answers unknown and revoked keys alike, so a caller cannot
// tell a revoked key from one that never existed.
var errInvalidKey = &core.Error{Kind: core.KindUnauthorized, Code: "unauthorized",
	Message: "missing, unknown or revoked API key"}

// bootstrapKey is SEATFLOW_API_TOKEN as a key: all scopes, never stored.
var bootstrapKey = access.APIKey{Name: "SEATFLOW_API_TOKEN", Scopes: access.AllScopes}

// apiKeyAuth admits requests whose "Authorization: Bearer <key>" is
// SEATFLOW_API_TOKEN or an active stored key holding the route's scope:
// 401 for no, unknown or revoked keys, 403 insufficient_scope otherwise.
func (s *Server) apiKeyAuth() echo.MiddlewareFunc {
	bootstrap := []byte(s.cfg.APIToken.Reveal())
	var (
		mu      sync.Mutex
		touched = map[int64]time.Time{} // key id → when this instance last wrote its last-used time
	)
	touch := func(c echo.Context, k access.APIKey, now time.Time) {
		mu.Lock()
		due := now.Sub(touched[k.ID]) >= apiKeyTouchEvery
		if due {
			touched[k.ID] = now
		}
		mu.Unlock()
		if due {
			if err := s.db.TouchAPIKey(c.Request().Context(), k.ID, now, apiKeyTouchEvery); err != nil {
				// Bookkeeping only: the call itself goes on.
				s.logger.WarnContext(c.Request().Context(), "record API key use", "key", k.Prefix, "err", err)
			}
		}
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			scheme, got, ok := strings.Cut(c.Request().Header.Get(echo.HeaderAuthorization), " ")
			got = strings.TrimSpace(got)
			if !ok || !strings.EqualFold(scheme, "Bearer") || got == "" {
				return unauthorizedKey(c)
			}
			key := bootstrapKey
			if subtle.ConstantTimeCompare([]byte(got), bootstrap) != 1 {
				var err error
				key, err = s.db.APIKeyByHash(c.Request().Context(), access.HashAPIKey(got))
				if errors.Is(err, access.ErrAPIKeyNotFound) || (err == nil && key.Revoked()) {
					return unauthorizedKey(c)
				}
				if err != nil {
					return err
				}
				touch(c, key, time.Now().UTC())
			}
			scope, known := routeScopes[c.Request().Method+" "+c.Path()]
			if !known || !key.Allows(scope) {
				return access.ErrInsufficientScope
			}
			c.Set(contextKeyAPIKey, key)
			// The key is named on the events of what it does (core.Via).
			c.SetRequest(c.Request().WithContext(core.WithVia(c.Request().Context(), apiActor(c))))
			return next(c)
		}
	}
}

// apiActor is who the call's key is on what it does: api:<key prefix>, or
// api:SEATFLOW_API_TOKEN for the bootstrap token, which has none.
func apiActor(c echo.Context) string {
	key, _ := c.Get(contextKeyAPIKey).(access.APIKey)
	return core.ActorAPIPrefix + cmp.Or(key.Prefix, bootstrapKey.Name)
}

// apiAction is the call's key as an audited actor, for calls that move money.
func apiAction(c echo.Context) *core.StaffAction {
	key, _ := c.Get(contextKeyAPIKey).(access.APIKey)
	return &core.StaffAction{Staff: apiActor(c), IP: c.RealIP(), Key: &key}
}

func unauthorizedKey(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="seatflow"`)
	return errInvalidKey
}
