package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Authenticator checks HTTP Basic credentials: *authn.Authenticator
// satisfies it. Errors: domain.ErrUnauthenticated, ErrAuthThrottled,
// ErrAuthUnavailable, or the context's error when the client went away.
type Authenticator interface {
	Authenticate(ctx context.Context, username string, password []byte, remote string) (meta.User, error)
}

// Security is how the node authenticates clients (api.md §4.1, §4.6).
type Security struct {
	// Enabled requires HTTP Basic credentials on every route but the
	// probes; off, every request acts as root under its client address.
	Enabled bool
	// Auth checks credentials; required when Enabled.
	Auth Authenticator
	// MetricsUnauthenticated serves /metrics on the API port without
	// credentials (http.metrics_unauthenticated).
	MetricsUnauthenticated bool
	// Audit receives denied requests and topic deletions; nil records none.
	Audit ports.AuditLog
}

// Context keys the auth middleware sets.
const (
	principalKey = "narad.principal"
	deniedKey    = "narad.denied" // the 403 message, for the audit line
)

// Answers of a failed authentication (api.md §4.1).
const (
	msgAuthRequired = "authentication required"
	wwwAuthenticate = `Basic realm="narad"`
)

// exempt reports whether path is served without credentials.
func (s Security) exempt(path string) bool {
	return path == "/healthz" || path == "/readyz" || path == "/metrics" && s.MetricsUnauthenticated
}

// authenticate runs before routing, so an unknown path without credentials
// answers 401, not 404, and before the 415 guard (api.md §0.2, §0.4). It
// leaves the caller's access.Principal on the context for the handlers.
func authenticate(s Security, log *zap.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		if !s.Enabled {
			c.Set(principalKey, access.Open(c.RemoteIP()))
			c.Next()
			return
		}
		if s.exempt(c.Request.URL.Path) {
			c.Next()
			return
		}
		p, err := s.principal(c)
		if err != nil {
			refuseAuth(c, log, err)
			return
		}
		c.Set(principalKey, p)
		c.Next()
		s.audit(c, p)
	}
}

func (s Security) principal(c *gin.Context) (access.Principal, error) {
	user, pass, ok := c.Request.BasicAuth()
	if !ok {
		return access.Principal{}, domain.ErrUnauthenticated
	}
	u, err := s.Auth.Authenticate(c.Request.Context(), user, []byte(pass), c.RemoteIP())
	if err != nil {
		return access.Principal{}, err
	}
	return access.FromUser(u), nil
}

// refuseAuth answers a failed authentication: 401 with the challenge, 429
// while throttled, 500 when the user store is unreadable, nothing when the
// client went away (recorded as 499).
func refuseAuth(c *gin.Context, log *zap.Logger, err error) {
	c.Abort()
	switch {
	case errors.Is(err, domain.ErrUnauthenticated):
		c.Header("WWW-Authenticate", wwwAuthenticate)
		writeError(c, http.StatusUnauthorized, msgAuthRequired)
	case errors.Is(err, domain.ErrAuthThrottled):
		writeError(c, http.StatusTooManyRequests, "too many failed authentication attempts")
	case c.Request.Context().Err() != nil:
	default:
		log.Error("authentication failed", zap.Error(err))
		writeError(c, http.StatusInternalServerError, "authentication unavailable")
	}
}

// audit records a denied request and a topic deletion (internals.md §12.4).
func (s Security) audit(c *gin.Context, p access.Principal) {
	if s.Audit == nil {
		return
	}
	status := c.Writer.Status()
	switch {
	case status == http.StatusForbidden:
		s.Audit.Record(ports.AuditEvent{Event: ports.AuditAccessDenied, Actor: p.Name,
			Subject: c.Request.Method + " " + c.Request.URL.Path, Outcome: ports.AuditRefused,
			Reason: c.GetString(deniedKey), Remote: c.RemoteIP()})
	case status == http.StatusNoContent && c.Request.Method == http.MethodDelete && c.FullPath() == "/v1/topics/:topic":
		s.Audit.Record(ports.AuditEvent{Event: ports.AuditTopicDelete, Actor: p.Name,
			Subject: "topic " + c.Param("topic"), Outcome: ports.AuditOK, Remote: c.RemoteIP()})
	}
}

// principalOf is the caller the auth middleware authenticated. A request
// that reached a handler without one (a wiring mistake) acts as nobody:
// every check refuses it.
func principalOf(c *gin.Context) access.Principal {
	if v, ok := c.Get(principalKey); ok {
		if p, ok := v.(access.Principal); ok {
			return p
		}
	}
	return access.Principal{}
}

// allow asks the access rule about r for the caller and answers the 403
// itself when refused; it reports whether the handler may go on.
func allow(c *gin.Context, log *zap.Logger, r access.Request) bool {
	if err := access.Decide(principalOf(c), r); err != nil {
		respondError(c, log, err)
		return false
	}
	return true
}
