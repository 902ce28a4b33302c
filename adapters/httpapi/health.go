package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// Readiness says whether the node may take traffic; a non-nil error is the
// reason it may not (api.md §2.2).
type Readiness interface {
	ShuttingDown() bool
	Ready() error
}

// HealthRoutes are /healthz and /readyz (api.md §2.1-2.2), never behind
// credentials.
func HealthRoutes(r Readiness) []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/healthz", Handle: func(c *gin.Context) {
			if r.ShuttingDown() {
				respondJSON(c, http.StatusServiceUnavailable, map[string]string{"status": "shutting down"})
				return
			}
			respondJSON(c, http.StatusOK, map[string]string{"status": "ok"})
		}},
		{Method: http.MethodGet, Path: "/readyz", Handle: func(c *gin.Context) {
			if err := r.Ready(); err != nil {
				writeError(c, http.StatusServiceUnavailable, err.Error())
				return
			}
			respondJSON(c, http.StatusOK, map[string]string{"status": "ready"})
		}},
	}
}
