package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/domain"
)

// Route is one handler on one method and path (gin syntax: /v1/topics/:topic).
// Each use case's file returns its routes; bootstrap hands them all to
// NewEngine, so the route groups are independent of each other.
type Route struct {
	Method string
	Path   string
	Handle gin.HandlerFunc
}

// NewEngine builds the client-facing router: authentication and the 415
// guard before routing (so 401 comes before 415, and 415 before 404/405),
// panics answered 500 and logged, plain-text 404 and 405 (with Allow) as the
// v3 server's multiplexer answered them (api.md §0.4), then the routes.
func NewEngine(log *zap.Logger, routes ...Route) *gin.Engine {
	return NewEngineWith(EngineOptions{Log: log}, routes...)
}

// EngineOptions are the router's collaborators.
type EngineOptions struct {
	Log *zap.Logger
	// Metrics, when set, records every request (api.md §7 narad_http_*).
	Metrics HTTPMetrics
	// Security says how clients authenticate; the zero value is security
	// off (every request acts as root under its client address).
	Security Security
}

// NewEngineWith is NewEngine with request metrics.
func NewEngineWith(o EngineOptions, routes ...Route) *gin.Engine {
	log := o.Log
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	e.HandleMethodNotAllowed = true
	if o.Metrics != nil {
		e.Use(observe(o.Metrics))
	}
	e.Use(recoverer(log), authenticate(o.Security, log), guard415)
	for _, r := range routes {
		e.Handle(r.Method, r.Path, r.Handle)
		if r.Method == http.MethodGet {
			e.Handle(http.MethodHead, r.Path, r.Handle)
		}
	}
	e.NoRoute(func(c *gin.Context) {
		c.Data(http.StatusNotFound, "text/plain; charset=utf-8", []byte("404 page not found\n"))
	})
	e.NoMethod(func(c *gin.Context) {
		c.Header("Allow", allowed(e, c.FullPath(), c.Request.URL.Path))
		c.Data(http.StatusMethodNotAllowed, "text/plain; charset=utf-8", []byte("Method Not Allowed\n"))
	})
	return e
}

// allowed lists the methods registered on the route matching path.
func allowed(e *gin.Engine, _ string, path string) string {
	var methods []string
	for _, r := range e.Routes() {
		if matches(r.Path, path) {
			methods = append(methods, r.Method)
		}
	}
	sort.Strings(methods)
	return strings.Join(methods, ", ")
}

// matches reports whether a gin pattern (":param" segments) matches path.
func matches(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i := range ps {
		if !strings.HasPrefix(ps[i], ":") && ps[i] != xs[i] {
			return false
		}
	}
	return true
}

// recoverer answers a panicking handler with a 500 and logs it, so one bad
// request never takes the node down.
func recoverer(log *zap.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if p := recover(); p != nil {
				log.Error("http handler panicked", zap.Any("panic", p), zap.String("path", c.Request.URL.Path), zap.Stack("stack"))
				if !c.Writer.Written() {
					writeError(c, http.StatusInternalServerError, "internal error")
				}
				c.Abort()
			}
		}()
		c.Next()
	}
}

// respondError answers err through the error table; a 5xx is logged with
// its detail, which the client never sees.
func respondError(c *gin.Context, log *zap.Logger, err error) {
	status, msg := statusOf(err)
	draining := errors.Is(err, domain.ErrDraining)
	if draining {
		c.Header("Retry-After", retryAfterDraining) // expected while it lasts: not logged
	}
	var later *domain.RetryLater
	if errors.As(err, &later) {
		c.Header("Retry-After", strconv.Itoa(later.Seconds))
	}
	if status >= http.StatusInternalServerError && !draining {
		log.Error("request failed", zap.String("route", c.FullPath()), zap.Int("status", status), zap.Error(err))
	}
	writeError(c, status, msg)
}

// respondJSON answers v as JSON followed by a newline, with an exact length.
func respondJSON(c *gin.Context, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeError(c, http.StatusInternalServerError, "internal error")
		return
	}
	c.Data(status, "application/json", append(body, '\n'))
}
