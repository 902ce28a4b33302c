package httpapi

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/application/membership"
)

// MemberLister lists the cluster's members: *membership.Roster satisfies it.
type MemberLister interface {
	List(ctx context.Context) ([]membership.MemberView, error)
}

var _ MemberLister = (*membership.Roster)(nil)

// detailNotBuilt is the status_error of every member with detail=true
// until members answer for their own status (node RPC op 33).
const detailNotBuilt = "node status is not available from this release"

// ClusterRoutes serves GET /v1/cluster/members (api.md §2.17), answered
// from the local replica. Security (admin only) is not applied yet.
func ClusterRoutes(l MemberLister, log *zap.Logger) []Route {
	h := &clusterHandlers{members: l, log: log}
	return []Route{{Method: http.MethodGet, Path: "/v1/cluster/members", Handle: h.list}}
}

type clusterHandlers struct {
	members MemberLister
	log     *zap.Logger
}

// memberBody is one member of the listing.
type memberBody struct {
	ID                  string `json:"id"`
	Addr                string `json:"addr"`
	Status              string `json:"status"`
	Draining            bool   `json:"draining"`
	OwnedPartitions     int    `json:"owned_partitions"`
	OutboundMoves       int    `json:"outbound_moves"`
	Voter               bool   `json:"voter"`
	Leader              bool   `json:"leader"`
	HeartbeatAgeSeconds int64  `json:"heartbeat_age_seconds"`
	StatusError         string `json:"status_error,omitempty"`
}

func (h *clusterHandlers) list(c *gin.Context) {
	detail, err := parseDetail(c.Request.URL.RawQuery)
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	views, err := h.members.List(c.Request.Context())
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	out := make([]memberBody, len(views))
	for i, v := range views {
		out[i] = memberBody{ID: v.ID, Addr: v.Addr, Status: v.Status, Draining: v.Draining,
			OwnedPartitions: v.OwnedPartitions, OutboundMoves: v.OutboundMoves, Voter: v.Voter,
			Leader: v.Leader, HeartbeatAgeSeconds: v.HeartbeatAgeSeconds}
		if detail {
			out[i].StatusError = detailNotBuilt
		}
	}
	respondJSON(c, http.StatusOK, map[string][]memberBody{"members": out})
}

// parseDetail reads the detail parameter: true or false, else 400.
func parseDetail(raw string) (bool, error) {
	q, err := parseQuery(raw)
	if err != nil {
		return false, err
	}
	v, ok, err := q.only("detail")
	switch {
	case err != nil || !ok:
		return false, err
	case v == "true":
		return true, nil
	case v == "false":
		return false, nil
	}
	return false, clientErr(400, "invalid detail: must be true or false")
}
