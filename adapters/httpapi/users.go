package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/application/users"
	"github.com/narad/narad/domain/meta"
)

// UserRoutes serve routes 20-25 (api.md §2.16) over the users use case,
// which applies the access rule and the no-escalation invariants itself.
func UserRoutes(svc *users.Service, log *zap.Logger) []Route {
	if svc == nil || log == nil {
		panic("httpapi: nil users service or logger")
	}
	h := &userHandlers{svc: svc, log: log}
	return []Route{
		{Method: http.MethodPost, Path: "/v1/users", Handle: h.create},
		{Method: http.MethodGet, Path: "/v1/users", Handle: h.list},
		{Method: http.MethodGet, Path: "/v1/users/:username", Handle: h.get},
		{Method: http.MethodDelete, Path: "/v1/users/:username", Handle: h.delete},
		{Method: http.MethodPut, Path: "/v1/users/:username/grants", Handle: h.grants},
		{Method: http.MethodPut, Path: "/v1/users/:username/password", Handle: h.password},
	}
}

type userHandlers struct {
	svc *users.Service
	log *zap.Logger
}

// grantJSON is one grant as clients send and read it.
type grantJSON struct {
	Action   string   `json:"action"`
	Patterns []string `json:"patterns,omitempty"`
}

// userJSON is the user object; it never holds the password hash.
type userJSON struct {
	Username    string      `json:"username"`
	Grants      []grantJSON `json:"grants,omitempty"`
	Root        bool        `json:"root,omitempty"`
	CreatedAtMs int64       `json:"created_at_ms,omitempty"`
	UpdatedAtMs int64       `json:"updated_at_ms,omitempty"`
}

type userCreateBody struct {
	Username string      `json:"username"`
	Password string      `json:"password"`
	Grants   []grantJSON `json:"grants"`
}

type grantsBody struct {
	Grants *[]grantJSON `json:"grants"`
}

type passwordBody struct {
	NewPassword     string `json:"new_password"`
	CurrentPassword string `json:"current_password"`
}

// errUserBodyTooLarge: a user body over 1 MiB is a 400 (api.md §0.2).
var errUserBodyTooLarge = clientErr(http.StatusBadRequest, "invalid json: http: request body too large")

func userView(u meta.User) userJSON {
	out := userJSON{Username: u.Username, Root: u.Root, CreatedAtMs: u.CreatedAtMs, UpdatedAtMs: u.UpdatedAtMs}
	for _, g := range u.Grants {
		out.Grants = append(out.Grants, grantJSON{Action: g.Action, Patterns: g.Patterns})
	}
	return out
}

func metaGrants(gs []grantJSON) []meta.Grant {
	out := make([]meta.Grant, 0, len(gs))
	for _, g := range gs {
		out = append(out, meta.Grant{Action: g.Action, Patterns: g.Patterns})
	}
	return out
}

func (h *userHandlers) create(c *gin.Context) {
	var b userCreateBody
	if err := decodeCappedBody(c.Request.Body, &b, errUserBodyTooLarge); err != nil {
		respondError(c, h.log, err)
		return
	}
	req := users.CreateRequest{Username: b.Username, Password: b.Password, Grants: metaGrants(b.Grants)}
	u, err := h.svc.Create(c.Request.Context(), principalOf(c), req)
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	respondJSON(c, http.StatusCreated, userView(u))
}

func (h *userHandlers) list(c *gin.Context) {
	us, err := h.svc.List(c.Request.Context(), principalOf(c))
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	out := make([]userJSON, 0, len(us))
	for _, u := range us {
		out = append(out, userView(u))
	}
	respondJSON(c, http.StatusOK, out)
}

func (h *userHandlers) get(c *gin.Context) {
	u, err := h.svc.Get(c.Request.Context(), principalOf(c), c.Param("username"))
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	respondJSON(c, http.StatusOK, userView(u))
}

func (h *userHandlers) delete(c *gin.Context) {
	if err := h.svc.Delete(c.Request.Context(), principalOf(c), c.Param("username")); err != nil {
		respondError(c, h.log, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// grants replaces the whole set; the field is required ([] removes every
// grant), so an empty body never wipes an account's grants by accident.
func (h *userHandlers) grants(c *gin.Context) {
	var b grantsBody
	err := decodeCappedBody(c.Request.Body, &b, errUserBodyTooLarge)
	if err == nil && b.Grants == nil {
		err = clientErr(http.StatusBadRequest, "grants required ([] removes every grant)")
	}
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	u, err := h.svc.SetGrants(c.Request.Context(), principalOf(c), c.Param("username"), metaGrants(*b.Grants))
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	respondJSON(c, http.StatusOK, userView(u))
}

func (h *userHandlers) password(c *gin.Context) {
	var b passwordBody
	if err := decodeCappedBody(c.Request.Body, &b, errUserBodyTooLarge); err != nil {
		respondError(c, h.log, err)
		return
	}
	req := users.PasswordChange{New: b.NewPassword, Current: b.CurrentPassword, Remote: c.RemoteIP()}
	if err := h.svc.SetPassword(c.Request.Context(), principalOf(c), c.Param("username"), req); err != nil {
		respondError(c, h.log, err)
		return
	}
	c.Status(http.StatusNoContent)
}
