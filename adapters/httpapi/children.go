package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain/meta"
)

// attachBody is a local attach (api.md §2.10.1), or a remote child's
// create when it names a remote (§2.10.2).
type attachBody struct {
	Child       string  `json:"child"`
	DelayMs     int64   `json:"delay_ms"`
	Remote      *string `json:"remote"`
	RemoteTopic *string `json:"remote_topic"`
	From        *string `json:"from"`
	Lanes       *int64  `json:"lanes"`
	DryRun      *bool   `json:"dry_run"`
}

// Bounds of a remote child's fields (api.md §2.10.2).
const (
	remoteLanesMin = 1
	remoteLanesMax = 8
)

// attach links an existing topic under the path's parent and answers the
// parent. A body over 1 MiB is a 400 here, not a 413 (api.md §0.2).
func (h *topicHandlers) attach(c *gin.Context) {
	var b attachBody
	if err := decodeCappedBody(c.Request.Body, &b, errAttachBodyTooLarge); err != nil {
		respondError(c, h.log, err)
		return
	}
	if b.Remote != nil || b.RemoteTopic != nil || b.From != nil || b.Lanes != nil || b.DryRun != nil {
		h.attachRemote(c, b)
		return
	}
	parent, err := h.svc.Attach(c.Request.Context(), topics.AttachRequest{Caller: principalOf(c), Parent: c.Param("topic"), Child: b.Child, DelayMs: b.DelayMs})
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	respondJSON(c, http.StatusOK, topicView(parent))
}

// detach dissolves a link; the child keeps its records (api.md §2.12). A
// remote child's stub goes with its link, once nothing is left to ship
// (or with force).
func (h *topicHandlers) detach(c *gin.Context) {
	force, err := parseBoolParam(c.Request.URL.RawQuery, "force")
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	if !h.unshippedClear(c, c.Param("child"), force) {
		return
	}
	if err := h.svc.Detach(c.Request.Context(), principalOf(c), c.Param("topic"), c.Param("child")); err != nil {
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
	// A remote child's link (api.md §2.11); absent for a local child.
	*remoteChildJSON
}

// listChildren lists the parent's children with their lag, and remote
// children with their link; partitions=true adds a remote child's rows
// per parent partition.
func (h *topicHandlers) listChildren(c *gin.Context) {
	partitions, err := parseBoolParam(c.Request.URL.RawQuery, "partitions")
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	got, err := h.svc.ListChildren(c.Request.Context(), principalOf(c), c.Param("topic"))
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	links := h.remoteLinks(c, got.Parent)
	out := childrenJSON{Parent: got.Parent, ParentID: got.ParentID, Children: make([]childJSON, 0, len(got.Children))}
	for _, ch := range got.Children {
		cj := childJSON{Name: ch.Name, DelayMs: ch.DelayMs, LagMessages: ch.LagMessages, LagComplete: ch.LagComplete}
		if l, ok := links[ch.Name]; ok {
			cj.remoteChildJSON = remoteChildView(l, partitions)
			if p := principalOf(c); p.Admin() && p.Secured() {
				cj.Remote = remoteLinkView(l.stub.Remote, true) // paused_by and created_by are for admins
			}
		}
		out.Children = append(out.Children, cj)
	}
	respondJSON(c, http.StatusOK, out)
}

func checkRemoteChildFields(b attachBody) error {
	switch {
	case b.Lanes != nil && (*b.Lanes < remoteLanesMin || *b.Lanes > remoteLanesMax):
		return clientErr(http.StatusBadRequest, "lanes must be %d to %d", remoteLanesMin, remoteLanesMax)
	case b.From != nil && *b.From != meta.RemoteFromAttach && *b.From != meta.RemoteFromUnconsumed && *b.From != meta.RemoteFromEarliest:
		return clientErr(http.StatusBadRequest, "from must be attach, unconsumed or earliest")
	case *b.Remote == "":
		return clientErr(http.StatusBadRequest, "remote must name a registered remote")
	}
	return nil
}
