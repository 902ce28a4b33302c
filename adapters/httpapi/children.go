package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/narad/narad/application/topics"
)

// attachBody is a local attach (api.md §2.10.1).
type attachBody struct {
	Child   string `json:"child"`
	DelayMs int64  `json:"delay_ms"`
}

// attach links an existing topic under the path's parent and answers the
// parent. A body over 1 MiB is a 400 here, not a 413 (api.md §0.2).
func (h *topicHandlers) attach(c *gin.Context) {
	var b attachBody
	if err := decodeCappedBody(c.Request.Body, &b, errAttachBodyTooLarge); err != nil {
		respondError(c, h.log, err)
		return
	}
	parent, err := h.svc.Attach(c.Request.Context(), topics.AttachRequest{Parent: c.Param("topic"), Child: b.Child, DelayMs: b.DelayMs})
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	respondJSON(c, http.StatusOK, topicView(parent))
}

// detach dissolves a link; the child keeps its records (api.md §2.12).
func (h *topicHandlers) detach(c *gin.Context) {
	if err := h.svc.Detach(c.Request.Context(), c.Param("topic"), c.Param("child")); err != nil {
		respondError(c, h.log, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// childrenJSON is a children listing (api.md §2.11).
type childrenJSON struct {
	Parent   string      `json:"parent"`
	ParentID string      `json:"parent_id,omitempty"`
	Children []childJSON `json:"children"`
}

type childJSON struct {
	Name        string `json:"name"`
	DelayMs     int64  `json:"delay_ms"`
	LagMessages int64  `json:"lag_messages"`
	LagComplete bool   `json:"lag_complete"`
}

// listChildren lists the parent's children with their lag. partitions
// (true/false) only adds rows to remote children, which are not listed
// with their link state yet: it is checked and otherwise ignored.
func (h *topicHandlers) listChildren(c *gin.Context) {
	q, err := parseQuery(c.Request.URL.RawQuery)
	if err == nil {
		err = flagParam(q, "partitions")
	}
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	got, err := h.svc.ListChildren(c.Request.Context(), c.Param("topic"))
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	out := childrenJSON{Parent: got.Parent, ParentID: got.ParentID, Children: make([]childJSON, 0, len(got.Children))}
	for _, ch := range got.Children {
		out.Children = append(out.Children, childJSON{Name: ch.Name, DelayMs: ch.DelayMs, LagMessages: ch.LagMessages, LagComplete: ch.LagComplete})
	}
	respondJSON(c, http.StatusOK, out)
}
