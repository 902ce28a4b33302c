package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/domain/remote"
)

// retryAfterCheckUnavailable is the Retry-After of a check that found the
// target or a member unavailable (api.md §2.10.2: 503, Retry-After: 2).
const retryAfterCheckUnavailable = "2"

// remoteLinkJSON is a stub's remote object (api.md §2.10.2); paused_by and
// created_by only for admins.
type remoteLinkJSON struct {
	Name        string             `json:"name"`
	Topic       string             `json:"topic"`
	TargetID    string             `json:"target_id,omitempty"`
	From        string             `json:"from"`
	Lanes       int32              `json:"lanes"`
	Paused      bool               `json:"paused,omitempty"`
	PauseReason string             `json:"pause_reason,omitempty"`
	PausedBy    string             `json:"paused_by,omitempty"`
	PausedAtMs  int64              `json:"paused_at_ms,omitempty"`
	Skip        map[string][]int64 `json:"skip,omitempty"`
	CreatedBy   string             `json:"created_by,omitempty"`
}

func remoteLinkView(l *meta.RemoteLink, admin bool) *remoteLinkJSON {
	if l == nil {
		return nil
	}
	out := &remoteLinkJSON{Name: l.Name, Topic: l.Topic, TargetID: l.TargetID, From: l.From, Lanes: l.Lanes,
		Paused: l.Paused, PauseReason: l.PauseReason, PausedAtMs: l.PausedAtMs}
	if admin {
		out.PausedBy, out.CreatedBy = l.PausedBy, l.CreatedBy
	}
	if len(l.Skip) > 0 {
		out.Skip = make(map[string][]int64, len(l.Skip))
		for _, s := range l.Skip {
			out.Skip[strconv.Itoa(int(s.Partition))] = s.Offsets
		}
	}
	return out
}

// stubView is a stub as the admin-only routes answer it.
func stubView(t meta.Topic) topicJSON {
	v := topicView(t)
	v.Remote = remoteLinkView(t.Remote, true)
	return v
}

// attachRemote creates a remote child (api.md §2.10.2): the fields are
// checked and the access rule applied (admin with security on), then the
// remotes use case runs the checks and writes the stub (201), or answers a
// dry run (200).
func (h *topicHandlers) attachRemote(c *gin.Context, b attachBody) {
	c.Header("Cache-Control", "no-store") // a remote-child answer (api.md §0.3)
	if b.Remote == nil {
		respondError(c, h.log, clientErr(http.StatusBadRequest, "remote_topic, from, lanes and dry_run are fields of a remote child and need remote"))
		return
	}
	if !allow(c, h.log, access.Request{Op: access.OpRemote}) {
		return
	}
	if err := checkRemoteChildFields(b); err != nil {
		respondError(c, h.log, err)
		return
	}
	if h.rem == nil {
		writeError(c, http.StatusNotImplemented, "remote children are not available on this node")
		return
	}
	req := remotes.AttachRequest{Parent: c.Param("topic"), Child: b.Child, Remote: *b.Remote, DelayMs: b.DelayMs,
		RemoteTopic: deref(b.RemoteTopic), From: deref(b.From), DryRun: b.DryRun != nil && *b.DryRun}
	if b.Lanes != nil {
		req.Lanes = int32(*b.Lanes)
	}
	out, err := h.rem.AttachChild(c.Request.Context(), principalOf(c), req)
	if err != nil {
		respondRemoteError(c, h.log, err)
		return
	}
	if out.DryRun {
		body := map[string]any{"dry_run": true, "attach_offsets": out.Offsets, "checks": reportViews(out.Checks), "warnings": out.Warnings}
		withCapabilities(body, out.Capabilities)
		respondJSON(c, http.StatusOK, body)
		return
	}
	respondJSON(c, http.StatusCreated, struct {
		topicJSON
		Warnings []string `json:"warnings,omitempty"`
	}{stubView(out.Stub), out.Warnings})
}

// capabilitiesJSON is what a dry run tells of the target (api.md
// §2.10.2 `capabilities`).
type capabilitiesJSON struct {
	MaxMessages int  `json:"max_messages"`
	Zstd        bool `json:"zstd"`
}

// withCapabilities adds a dry run's capabilities to its body; nothing when
// c is nil (no allowlist, or this node could not probe the target).
func withCapabilities(body map[string]any, c *remotes.Capabilities) {
	if c != nil {
		body["capabilities"] = capabilitiesJSON{MaxMessages: c.MaxMessages, Zstd: c.Zstd}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// respondRemoteError answers a remotes or remote-child request's error: a
// failed check with its class's status and the members' reports, a gate's
// 412 naming the members that held the write back, a skip that does not
// match where the link is stuck with blocked_at.
func respondRemoteError(c *gin.Context, log *zap.Logger, err error) {
	var ce *remotes.CheckError
	var se *remotes.SkipError
	var ge *remotes.GateError
	switch {
	case errors.As(err, &ge):
		members := make([]map[string]string, len(ge.Members))
		for i, m := range ge.Members {
			members[i] = map[string]string{"node": m.Node, "reason": m.Reason}
		}
		respondJSON(c, http.StatusPreconditionFailed, map[string]any{"error": ge.Error(), "gate": ge.Gate, "members": members})
	case errors.As(err, &ce):
		status := remote.HTTPStatus(ce.Class)
		switch status {
		case http.StatusTooManyRequests:
			c.Header("Retry-After", strconv.Itoa(int(remote.GateRetryAfterMax.Seconds())))
		case http.StatusServiceUnavailable:
			c.Header("Retry-After", retryAfterCheckUnavailable)
		}
		respondJSON(c, status, map[string]any{"error": ce.Error(), "class": ce.Class, "checks": reportViews(ce.Checks)})
	case errors.As(err, &se):
		var at any
		if se.At != nil {
			at = map[string]any{"partition": se.Partition, "offset": se.At.Offset, "state": se.At.State}
		}
		respondJSON(c, http.StatusConflict, map[string]any{"error": se.Error(), "blocked_at": at})
	default:
		respondError(c, log, err)
	}
}

func reportViews(rs []remotes.Report) []reportJSON {
	out := make([]reportJSON, 0, len(rs))
	for _, r := range rs {
		out = append(out, reportView(r))
	}
	return out
}

// pause, resume and skip change a remote child's link (api.md §2.12.1) and
// answer the stub.
func (h remoteHandlers) pause(c *gin.Context) {
	var b struct {
		Reason string `json:"reason"`
	}
	if !h.decodeOptional(c, &b) {
		return
	}
	stub, err := h.svc.Pause(c.Request.Context(), principalOf(c), c.Param("topic"), c.Param("child"), b.Reason)
	h.answerStub(c, stub, err)
}

func (h remoteHandlers) resume(c *gin.Context) {
	var b struct {
		AcceptTarget bool `json:"accept_target"`
	}
	if !h.decodeOptional(c, &b) {
		return
	}
	stub, err := h.svc.Resume(c.Request.Context(), principalOf(c), c.Param("topic"), c.Param("child"), b.AcceptTarget)
	h.answerStub(c, stub, err)
}

func (h remoteHandlers) skip(c *gin.Context) {
	var b struct {
		Partition *int64 `json:"partition"`
		Offset    *int64 `json:"offset"`
	}
	if err := decodeRemoteBody(c.Request.Body, &b); err != nil {
		respondError(c, h.log, err)
		return
	}
	if b.Partition == nil || b.Offset == nil || *b.Partition < 0 || *b.Partition > maxPartitionIndex || *b.Offset < 0 {
		respondError(c, h.log, clientErr(http.StatusBadRequest, "partition and offset are required, both >= 0"))
		return
	}
	stub, err := h.svc.Skip(c.Request.Context(), principalOf(c), c.Param("topic"), c.Param("child"), int32(*b.Partition), *b.Offset)
	h.answerStub(c, stub, err)
}

// maxPartitionIndex bounds a partition number a body may name.
const maxPartitionIndex = 1<<31 - 1

// decodeOptional decodes an optional body (empty = the defaults); false
// when it answered an error.
func (h remoteHandlers) decodeOptional(c *gin.Context, v any) bool {
	if c.Request.ContentLength == 0 {
		return true
	}
	if err := decodeRemoteBody(c.Request.Body, v); err != nil {
		respondError(c, h.log, err)
		return false
	}
	return true
}

func (h remoteHandlers) answerStub(c *gin.Context, stub meta.Topic, err error) {
	if err != nil {
		respondRemoteError(c, h.log, err)
		return
	}
	respondJSON(c, http.StatusOK, stubView(stub))
}

// remoteChildJSON is what a children listing adds for a remote child
// (api.md §2.11); it never shows the remote's URL or credential.
type remoteChildJSON struct {
	Remote           *remoteLinkJSON     `json:"remote"`
	Paused           bool                `json:"paused"`
	State            string              `json:"state"`
	BlockedAt        *blockedJSON        `json:"blocked_at"`
	TargetVerifiedAt *string             `json:"target_verified_at"`
	Unverified       bool                `json:"unverified"`
	LastSuccessAt    *string             `json:"last_success_at"`
	LagSeconds       int64               `json:"lag_seconds"`
	HeadroomSeconds  *int64              `json:"retention_headroom_seconds,omitempty"`
	SourceDrained    bool                `json:"source_drained"`
	Partitions       []partitionLinkJSON `json:"partitions,omitempty"`
}

type blockedJSON struct {
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	State     string `json:"state"`
}

// partitionLinkJSON is one parent partition's row of a remote child
// (api.md §2.11, partitions=true); an offset nobody could tell is null.
type partitionLinkJSON struct {
	Partition     int32        `json:"partition"`
	Node          string       `json:"node"`
	StartOffset   *int64       `json:"start_offset"`
	NextOffset    *int64       `json:"next_offset"`
	HighWatermark *int64       `json:"high_watermark"`
	AckFrontier   *int64       `json:"ack_frontier"`
	State         string       `json:"state"`
	LastSuccessAt *string      `json:"last_success_at"`
	BlockedAt     *blockedJSON `json:"blocked_at"`
}

// remoteLink is one remote child's stub and link for a listing.
type remoteLink struct {
	stub meta.Topic
	link remotes.LinkState
}

// remoteLinks reads the links of parent's remote children; none when this
// node has no remote plane or the parent has none.
func (h *topicHandlers) remoteLinks(c *gin.Context, parent string) map[string]remoteLink {
	if h.rem == nil {
		return nil
	}
	stubs, links, err := h.rem.LinksOf(c.Request.Context(), parent)
	if err != nil {
		h.log.Warn("remote links not read for a children listing", zap.String("parent", parent), zap.Error(err))
		return nil
	}
	out := make(map[string]remoteLink, len(stubs))
	for _, s := range stubs {
		out[s.Name] = remoteLink{stub: s, link: links[s.Name]}
	}
	return out
}

func remoteChildView(l remoteLink, partitions bool) *remoteChildJSON {
	out := &remoteChildJSON{Remote: remoteLinkView(l.stub.Remote, false), Paused: l.stub.Remote.Paused, State: l.link.State,
		Unverified: l.link.Unverified, TargetVerifiedAt: msTime(l.link.TargetVerifiedMs), LastSuccessAt: msTime(l.link.LastSuccessMs),
		LagSeconds: l.link.LagSeconds, HeadroomSeconds: l.link.HeadroomSeconds, SourceDrained: l.link.SourceDrained}
	if b := l.link.Blocked; b != nil {
		out.BlockedAt = &blockedJSON{Partition: b.Partition, Offset: b.BlockedAt, State: b.State}
	}
	if partitions {
		out.Partitions = make([]partitionLinkJSON, 0, len(l.link.Partitions))
		for _, p := range l.link.Partitions {
			row := partitionLinkJSON{Partition: p.Partition, Node: p.Node, StartOffset: knownOffset(p.StartOffset),
				NextOffset: knownOffset(p.NextOffset), HighWatermark: knownOffset(p.HighWatermark), AckFrontier: knownOffset(p.AckFrontier),
				State: p.State, LastSuccessAt: msTime(p.LastOKMs)}
			if p.BlockedAt >= 0 {
				row.BlockedAt = &blockedJSON{Partition: p.Partition, Offset: p.BlockedAt, State: p.State}
			}
			out.Partitions = append(out.Partitions, row)
		}
	}
	return out
}

// knownOffset is an offset for JSON, nil (null) when unknown (negative).
func knownOffset(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

// msTime is an RFC 3339 time of Unix ms, nil for 0 (shown as null).
func msTime(ms int64) *string {
	if ms == 0 {
		return nil
	}
	s := rfc3339Ms(ms)
	return &s
}

// unshippedClear runs the unshipped check before the removal of topic
// name (a detach or delete); false when it answered the request.
func (h *topicHandlers) unshippedClear(c *gin.Context, name string, force bool) bool {
	if h.rem == nil {
		return true
	}
	err := h.rem.BeforeRemovalOf(c.Request.Context(), principalOf(c), name, force)
	if err != nil {
		c.Header("Cache-Control", "no-store") // a remote-child answer (api.md §0.3)
	}
	var ue *remotes.UnshippedError
	switch {
	case errors.As(err, &ue):
		u := ue.Report
		body := map[string]any{"error": ue.Error(), "lag_messages": u.LagMessages, "lag_complete": u.LagComplete,
			"dispatch_backlog": u.DispatchBacklog}
		if len(u.NotAnswering) > 0 {
			body["not_answering"] = u.NotAnswering
		}
		if len(u.OverScanLimit) > 0 {
			body["backlog_over_scan_limit"] = u.OverScanLimit
		}
		respondJSON(c, http.StatusConflict, body)
		return false
	case err != nil:
		respondError(c, h.log, err)
		return false
	}
	return true
}
