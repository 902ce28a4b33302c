package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/domain/access"
)

// Answers of the remote plane this build does not have yet (api.md §2.18).
const (
	msgRemotesNotAvailable = "remotes are not available on this node"
	msgRemotesHopNeeded    = "remote writes carry a password, so this node needs an encrypted API hop: set remotes.api_hop_encrypted"
)

// RemoteRoutes serve the remotes routes (api.md §1 rows 32-38) and the
// remote-child routes (13-15) as a node without the remote plane does:
// after the access rule (admin with security on; 403 "remotes require
// security" with it off), a create answers 412 because this node cannot
// attest an encrypted API hop (remotes.api_hop_encrypted is refused at
// start-up by this build), and every other route 501. Nothing is stored.
func RemoteRoutes(log *zap.Logger) []Route {
	h := remoteHandlers{log: log}
	routes := []Route{
		{Method: http.MethodPost, Path: "/v1/remotes", Handle: h.guard(h.create)},
		{Method: http.MethodGet, Path: "/v1/remotes", Handle: h.guard(h.unavailable)},
		{Method: http.MethodGet, Path: "/v1/remotes/:name", Handle: h.guard(h.unavailable)},
		{Method: http.MethodPatch, Path: "/v1/remotes/:name", Handle: h.guard(h.unavailable)},
		{Method: http.MethodDelete, Path: "/v1/remotes/:name", Handle: h.guard(h.unavailable)},
		{Method: http.MethodPost, Path: "/v1/remotes/:name/test", Handle: h.guard(h.unavailable)},
		{Method: http.MethodPost, Path: "/v1/cluster/reencrypt-remotes", Handle: h.guard(h.unavailable)},
	}
	for _, verb := range []string{"pause", "resume", "skip"} {
		routes = append(routes, Route{Method: http.MethodPost, Path: "/v1/topics/:topic/children/:child/" + verb, Handle: h.guard(h.unavailable)})
	}
	return routes
}

type remoteHandlers struct{ log *zap.Logger }

// guard applies the remotes' access rule and marks every answer no-store
// (api.md §0.3).
func (h remoteHandlers) guard(next gin.HandlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Header("Cache-Control", "no-store")
		if allow(c, h.log, access.Request{Op: access.OpRemote}) {
			next(c)
		}
	}
}

func (h remoteHandlers) create(c *gin.Context) {
	writeError(c, http.StatusPreconditionFailed, msgRemotesHopNeeded)
}

func (h remoteHandlers) unavailable(c *gin.Context) {
	writeError(c, http.StatusNotImplemented, msgRemotesNotAvailable)
}
