package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/application/moves"
	"github.com/narad/narad/domain/meta"
)

// Decommissioner drains members: *membership.Decommissioner satisfies it.
type Decommissioner interface {
	Verdict(ctx context.Context, id string) (membership.Verdict, error)
	Start(ctx context.Context, c membership.Caller, id string) error
	Cancel(ctx context.Context, c membership.Caller, id string) error
}

// Forgetter drops Raft servers without a member record:
// *membership.Forgetter satisfies it.
type Forgetter interface {
	Forget(ctx context.Context, id string) (membership.Forgotten, error)
}

// MoveAborter clears move targets: *moves.Aborter satisfies it.
type MoveAborter interface {
	Abort(ctx context.Context, actor, topic string, partition int32, target string) (meta.Move, error)
}

var (
	_ Decommissioner = (*membership.Decommissioner)(nil)
	_ Forgetter      = (*membership.Forgetter)(nil)
	_ MoveAborter    = (*moves.Aborter)(nil)
)

// ClusterAdminRoutes serves the cluster's write routes to admins (api.md
// §2.17): decommission and its cancel, forget, and a move's abort.
func ClusterAdminRoutes(d Decommissioner, f Forgetter, a MoveAborter, store ClusterReader, log *zap.Logger) []Route {
	h := &clusterAdmin{decom: d, forget: f, abort: a, lists: &clusterHandlers{store: store, log: log}, log: log}
	return []Route{
		{Method: http.MethodPost, Path: "/v1/cluster/members/:id/decommission", Handle: h.lists.admin(h.startDecommission)},
		{Method: http.MethodDelete, Path: "/v1/cluster/members/:id/decommission", Handle: h.lists.admin(h.cancelDecommission)},
		{Method: http.MethodPost, Path: "/v1/cluster/members/:id/forget", Handle: h.lists.admin(h.forgetMember)},
		{Method: http.MethodPost, Path: "/v1/cluster/moves/:topic/:partition/abort", Handle: h.lists.admin(h.abortMove)},
	}
}

type clusterAdmin struct {
	decom  Decommissioner
	forget Forgetter
	abort  MoveAborter
	lists  *clusterHandlers
	log    *zap.Logger
}

// reasonJSON is one reason a decommission is refused.
type reasonJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// verdictJSON is a dry run's answer.
type verdictJSON struct {
	Member            string       `json:"member"`
	WouldDecommission bool         `json:"would_decommission"`
	Reasons           []reasonJSON `json:"reasons"`
	Voter             bool         `json:"voter"`
	OwnedPartitions   int          `json:"owned_partitions"`
	InboundMoves      int          `json:"inbound_moves"`
}

func reasonsJSON(rs []membership.Reason) []reasonJSON {
	out := make([]reasonJSON, len(rs))
	for i, r := range rs {
		out[i] = reasonJSON{Code: r.Code, Message: r.Message}
	}
	return out
}

func (h *clusterAdmin) startDecommission(c *gin.Context) {
	dry, err := parseDryRun(c.Request.URL.RawQuery)
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	ctx, id := c.Request.Context(), c.Param("id")
	if dry {
		v, err := h.decom.Verdict(ctx, id)
		if err != nil {
			respondError(c, h.log, err)
			return
		}
		respondJSON(c, http.StatusOK, verdictJSON{Member: v.Member, WouldDecommission: v.WouldDecommission,
			Reasons: reasonsJSON(v.Reasons), Voter: v.Voter, OwnedPartitions: v.OwnedPartitions, InboundMoves: v.InboundMoves})
		return
	}
	err = h.decom.Start(ctx, callerOf(c), id)
	var refused *membership.RefusedError
	switch {
	case errors.As(err, &refused):
		status, _ := statusOf(err)
		respondJSON(c, status, map[string]any{"error": err.Error(), "reasons": reasonsJSON(refused.Verdict.Reasons)})
	case err != nil:
		respondError(c, h.log, err)
	default:
		c.Status(http.StatusNoContent)
	}
}

func (h *clusterAdmin) cancelDecommission(c *gin.Context) {
	q, err := parseQuery(c.Request.URL.RawQuery)
	if err == nil && q.has("dry_run") {
		err = clientErr(http.StatusBadRequest, "dry_run is not accepted when cancelling a decommission")
	}
	if err == nil {
		err = h.decom.Cancel(c.Request.Context(), callerOf(c), c.Param("id"))
	}
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (h *clusterAdmin) forgetMember(c *gin.Context) {
	f, err := h.forget.Forget(c.Request.Context(), c.Param("id"))
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	respondJSON(c, http.StatusOK, map[string]any{"id": f.ID, "voter": f.Voter})
}

func (h *clusterAdmin) abortMove(c *gin.Context) {
	partition, err := strconv.ParseInt(c.Param("partition"), 10, 32)
	if err != nil || partition < 0 {
		respondError(c, h.log, clientErr(http.StatusBadRequest, "invalid partition: must be a non-negative integer"))
		return
	}
	q, err := parseQuery(c.Request.URL.RawQuery)
	var target string
	if err == nil {
		target, _, err = q.only("target")
	}
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	mv, err := h.abort.Abort(c.Request.Context(), principalOf(c).Name, c.Param("topic"), int32(partition), target)
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	members, err := h.lists.store.Members()
	byID := make(map[string]meta.Member, len(members))
	for _, m := range members {
		byID[m.ID] = m
	}
	j := moveJSON{Topic: mv.Topic, Partition: mv.Partition, From: mv.From, To: mv.To,
		FromStatus: endStatus(byID, mv.From), ToStatus: endStatus(byID, mv.To)}
	if err != nil {
		j.FromStatus, j.ToStatus = "", ""
	}
	respondJSON(c, http.StatusAccepted, map[string]any{"move": j,
		"note": mv.From + " keeps the partition and goes on serving it; " + mv.To + " throws its partial copy away"})
}

// callerOf is who asks, for the audit log.
func callerOf(c *gin.Context) membership.Caller {
	return membership.Caller{Name: principalOf(c).Name, Remote: c.RemoteIP()}
}

// parseDryRun reads dry_run: true or false (absent: false), else 400.
func parseDryRun(raw string) (bool, error) { return parseBoolParam(raw, "dry_run") }
