package httpapi

import (
	"bytes"
	"crypto/sha512"
	"encoding/hex"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/domain/access"
)

// Answers of the remote plane (api.md §2.18).
const (
	remoteBodyMaxBytes = 128 << 10
)

// errRemoteBodyTooLarge: a remotes body over 128 KiB (api.md §2.18).
var errRemoteBodyTooLarge = clientErr(http.StatusRequestEntityTooLarge, "request body too large")

// RemoteRoutes serve the remotes routes (api.md §1 rows 32-38) and the
// remote-child routes (13-15) over the remotes use case. Every answer is
// marked no-store; the access
// rule (admin with security on; 403 "remotes require security" with it
// off) runs before anything is read.
func RemoteRoutes(svc *remotes.Service, log *zap.Logger) []Route {
	if svc == nil || log == nil {
		panic("httpapi: nil remotes service or logger")
	}
	h := remoteHandlers{svc: svc, log: log}
	routes := []Route{
		{Method: http.MethodPost, Path: "/v1/remotes", Handle: h.guard(h.create)},
		{Method: http.MethodGet, Path: "/v1/remotes", Handle: h.guard(h.list)},
		{Method: http.MethodGet, Path: "/v1/remotes/:name", Handle: h.guard(h.get)},
		{Method: http.MethodPatch, Path: "/v1/remotes/:name", Handle: h.guard(h.update)},
		{Method: http.MethodDelete, Path: "/v1/remotes/:name", Handle: h.guard(h.delete)},
		{Method: http.MethodPost, Path: "/v1/remotes/:name/test", Handle: h.guard(h.test)},
		{Method: http.MethodPost, Path: "/v1/cluster/reencrypt-remotes", Handle: h.guard(h.reencrypt)},
	}
	for _, r := range []struct {
		verb   string
		handle gin.HandlerFunc
	}{{"pause", h.pause}, {"resume", h.resume}, {"skip", h.skip}} {
		routes = append(routes, Route{Method: http.MethodPost, Path: "/v1/topics/:topic/children/:child/" + r.verb, Handle: h.guard(r.handle)})
	}
	return routes
}

type remoteHandlers struct {
	svc *remotes.Service
	log *zap.Logger
}

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

// decodeRemoteBody decodes a remotes body of at most 128 KiB, strictly.
func decodeRemoteBody(r io.Reader, v any) error {
	body, err := io.ReadAll(io.LimitReader(r, remoteBodyMaxBytes+1))
	if err != nil {
		return bodyReadError(err, "invalid json")
	}
	if len(body) > remoteBodyMaxBytes {
		return errRemoteBodyTooLarge
	}
	return decodeCappedBody(bytes.NewReader(body), v, errRemoteBodyTooLarge)
}

func (h remoteHandlers) create(c *gin.Context) {
	var b remoteCreateBody
	if err := decodeRemoteBody(c.Request.Body, &b); err != nil {
		respondRemoteError(c, h.log, err)
		return
	}
	req, err := b.request()
	if err != nil {
		respondRemoteError(c, h.log, err)
		return
	}
	v, err := h.svc.Create(c.Request.Context(), principalOf(c), req)
	clear(req.Password)
	if err != nil {
		respondRemoteError(c, h.log, err)
		return
	}
	respondJSON(c, http.StatusCreated, remoteView(v))
}

func (h remoteHandlers) update(c *gin.Context) {
	var b remotePatchBody
	if err := decodeRemoteBody(c.Request.Body, &b); err != nil {
		respondRemoteError(c, h.log, err)
		return
	}
	req, err := b.request()
	if err != nil {
		respondRemoteError(c, h.log, err)
		return
	}
	v, err := h.svc.Update(c.Request.Context(), principalOf(c), c.Param("name"), req)
	clear(req.Password)
	if err != nil {
		respondRemoteError(c, h.log, err)
		return
	}
	respondJSON(c, http.StatusOK, remoteView(v))
}

func (h remoteHandlers) list(c *gin.Context) {
	nodes, err := parseNodesParam(c.Request.URL.RawQuery)
	if err != nil {
		respondRemoteError(c, h.log, err)
		return
	}
	l, err := h.svc.List(c.Request.Context(), principalOf(c), nodes)
	if err != nil {
		respondRemoteError(c, h.log, err)
		return
	}
	respondJSON(c, http.StatusOK, listingView(l))
}

func (h remoteHandlers) get(c *gin.Context) {
	nodes, err := parseNodesParam(c.Request.URL.RawQuery)
	if err != nil {
		respondRemoteError(c, h.log, err)
		return
	}
	v, err := h.svc.Get(c.Request.Context(), principalOf(c), c.Param("name"), nodes)
	if err != nil {
		respondRemoteError(c, h.log, err)
		return
	}
	respondJSON(c, http.StatusOK, remoteView(v))
}

func (h remoteHandlers) delete(c *gin.Context) {
	force, err := parseBoolParam(c.Request.URL.RawQuery, "force")
	if err != nil {
		respondRemoteError(c, h.log, err)
		return
	}
	err = h.svc.Delete(c.Request.Context(), principalOf(c), c.Param("name"), force)
	var inUse *remotes.InUseError
	switch {
	case asInUse(err, &inUse):
		respondJSON(c, http.StatusConflict, map[string]any{"error": inUse.Error(), "links": inUse.Links})
	case err != nil:
		respondRemoteError(c, h.log, err)
	default:
		c.Status(http.StatusNoContent)
	}
}

func (h remoteHandlers) test(c *gin.Context) {
	var b struct {
		Topic  string `json:"topic"`
		Source string `json:"source"`
	}
	if err := decodeRemoteBody(c.Request.Body, &b); err != nil {
		respondRemoteError(c, h.log, err)
		return
	}
	out, err := h.svc.Test(c.Request.Context(), principalOf(c), c.Param("name"), remotes.TestRequest{Topic: b.Topic, Source: b.Source})
	if err != nil {
		respondRemoteError(c, h.log, err)
		return
	}
	respondJSON(c, http.StatusOK, testView(out))
}

// reencrypt takes an empty body or {} and nothing else.
func (h remoteHandlers) reencrypt(c *gin.Context) {
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, remoteBodyMaxBytes+1))
	if err != nil {
		respondError(c, h.log, bodyReadError(err, "invalid json"))
		return
	}
	if t := bytes.TrimSpace(body); len(t) != 0 && string(t) != "{}" {
		respondError(c, h.log, clientErr(http.StatusBadRequest, "the body must be empty or {}"))
		return
	}
	out, err := h.svc.Reencrypt(c.Request.Context(), principalOf(c))
	if err != nil {
		respondRemoteError(c, h.log, err)
		return
	}
	failed := make([]map[string]string, 0, len(out.Failed))
	for _, f := range out.Failed {
		failed = append(failed, map[string]string{"name": f.Name, "reason": f.Reason})
	}
	respondJSON(c, http.StatusOK, map[string]any{"key_version": out.KeyVersion, "reencrypted": out.Reencrypted,
		"already_current": out.AlreadyCurrent, "failed": failed})
}

// parseNodesParam reads nodes: true (the default) or false.
func parseNodesParam(raw string) (bool, error) { return parseBoolParamOr(raw, "nodes", true) }

// caSHA512 is the hex SHA-512 of a CA bundle, "" for system roots.
func caSHA512(ca string) string {
	if ca == "" {
		return ""
	}
	sum := sha512.Sum512([]byte(ca))
	return hex.EncodeToString(sum[:])
}
