package httpapi

import (
	"context"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/ports"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/application/membership"
)

// MemberLister lists the cluster's members: *membership.Roster satisfies it.
type MemberLister interface {
	List(ctx context.Context) ([]membership.MemberView, error)
	// ListDetail adds each member's own status (detail=true).
	ListDetail(ctx context.Context) ([]membership.MemberView, error)
	// Statuses asks members for their own status (moves detail=true).
	Statuses(ctx context.Context, ids []string) (map[string]ports.NodeStatus, map[string]string)
}

var _ MemberLister = (*membership.Roster)(nil)

// ClusterReader reads what the cluster routes show from the local replica:
// ports.MetadataStore satisfies it.
type ClusterReader interface {
	ports.MetadataCluster
	ports.MetadataHistory
}

// ClusterRoutes serves GET /v1/cluster/members and /v1/cluster/moves
// (api.md §2.17) and GET /v1/cluster/events (the metadata history, our
// extension: docs/api-extensions.md), answered from the local replica, to admins only
// (reads included, api.md §2.17).
func ClusterRoutes(l MemberLister, store ClusterReader, log *zap.Logger) []Route {
	h := &clusterHandlers{members: l, store: store, log: log}
	return []Route{
		{Method: http.MethodGet, Path: "/v1/cluster/members", Handle: h.admin(h.list)},
		{Method: http.MethodGet, Path: "/v1/cluster/moves", Handle: h.admin(h.moves)},
		{Method: http.MethodGet, Path: "/v1/cluster/events", Handle: h.admin(h.events)},
	}
}

type clusterHandlers struct {
	members MemberLister
	store   ClusterReader
	log     *zap.Logger
}

// admin serves next to admins only (403 "admin privileges required").
func (h *clusterHandlers) admin(next gin.HandlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		if allow(c, h.log, access.Request{Op: access.OpAdmin}) {
			next(c)
		}
	}
}

// memberBody is one member of the listing.
type memberBody struct {
	ID                  string          `json:"id"`
	Addr                string          `json:"addr"`
	Status              string          `json:"status"`
	Draining            bool            `json:"draining"`
	OwnedPartitions     int             `json:"owned_partitions"`
	OutboundMoves       int             `json:"outbound_moves"`
	Voter               bool            `json:"voter"`
	Leader              bool            `json:"leader"`
	HeartbeatAgeSeconds int64           `json:"heartbeat_age_seconds"`
	DecommissionBlocked []reasonJSON    `json:"decommission_blocked,omitempty"`
	NodeStatus          *nodeStatusJSON `json:"node_status,omitempty"`
	StatusError         string          `json:"status_error,omitempty"`
}

// nodeStatusJSON is a member's own report (detail=true).
type nodeStatusJSON struct {
	Node            string         `json:"node"`
	Draining        bool           `json:"draining"`
	ProduceInFlight int64          `json:"produce_in_flight"`
	DispatchBacklog uint64         `json:"dispatch_backlog"`
	Quarantine      quarantineJSON `json:"quarantine"`
	// Moves are the member's move workers.
	Moves []moveWorkerJSON `json:"moves"`
}

// moveWorkerJSON is one move worker as its destination reports it.
type moveWorkerJSON struct {
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	Source      string `json:"source"`
	Target      string `json:"target"`
	StartedAt   string `json:"started_at"`
	Phase       string `json:"phase"`
	Attempts    int    `json:"attempts"`
	LastError   string `json:"last_error,omitempty"`
	CopiedBytes int64  `json:"copied_bytes"`
	Blocked     string `json:"blocked,omitempty"`
}

func moveWorkerOf(m ports.MoveReport) moveWorkerJSON {
	return moveWorkerJSON{Topic: m.Topic, Partition: m.Partition, Source: m.Source, Target: m.Target,
		StartedAt: m.StartedAt.UTC().Format(time.RFC3339), Phase: m.Phase, Attempts: m.Attempts,
		LastError: m.LastError, CopiedBytes: m.CopiedBytes, Blocked: m.Blocked}
}

type quarantineJSON struct {
	Copies int      `json:"copies"`
	Bytes  int64    `json:"bytes"`
	List   []string `json:"list"`
}

func nodeStatusOf(st *ports.NodeStatus) *nodeStatusJSON {
	if st == nil {
		return nil
	}
	list := st.Quarantine.List
	if list == nil {
		list = []string{}
	}
	moves := make([]moveWorkerJSON, len(st.Moves))
	for i, m := range st.Moves {
		moves[i] = moveWorkerOf(m)
	}
	return &nodeStatusJSON{Node: st.Node, Draining: st.Draining, ProduceInFlight: st.ProduceInFlight,
		DispatchBacklog: st.DispatchBacklog, Moves: moves,
		Quarantine: quarantineJSON{Copies: st.Quarantine.Copies, Bytes: st.Quarantine.Bytes, List: list}}
}

func (h *clusterHandlers) list(c *gin.Context) {
	detail, err := parseDetail(c.Request.URL.RawQuery)
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	list := h.members.List
	if detail {
		list = h.members.ListDetail
	}
	views, err := list(c.Request.Context())
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	out := make([]memberBody, len(views))
	for i, v := range views {
		out[i] = memberBody{ID: v.ID, Addr: v.Addr, Status: v.Status, Draining: v.Draining,
			OwnedPartitions: v.OwnedPartitions, OutboundMoves: v.OutboundMoves, Voter: v.Voter,
			Leader: v.Leader, HeartbeatAgeSeconds: v.HeartbeatAgeSeconds,
			NodeStatus: nodeStatusOf(v.NodeStatus), StatusError: v.StatusError}
		if len(v.DecommissionBlocked) > 0 {
			out[i].DecommissionBlocked = reasonsJSON(v.DecommissionBlocked)
		}
	}
	respondJSON(c, http.StatusOK, map[string][]memberBody{"members": out})
}

// parseDetail reads the detail parameter: true or false, else 400.
func parseDetail(raw string) (bool, error) { return parseBoolParam(raw, "detail") }

// parseBoolParam reads the boolean parameter name: true or false (absent:
// false); another value or a repeat is a 400.
func parseBoolParam(raw, name string) (bool, error) { return parseBoolParamOr(raw, name, false) }

// parseBoolParamOr is parseBoolParam with absent meaning def.
func parseBoolParamOr(raw, name string, def bool) (bool, error) {
	q, err := parseQuery(raw)
	if err != nil {
		return false, err
	}
	v, ok, err := q.only(name)
	switch {
	case err != nil:
		return false, err
	case !ok:
		return def, nil
	case v == "true":
		return true, nil
	case v == "false":
		return false, nil
	}
	return false, clientErr(400, "invalid %s: must be true or false", name)
}
