package httpclient

import (
	"context"
	"encoding/json"
	"net/url"
)

// Member is one cluster member as GET /v1/cluster/members lists it (api.md
// §2.17).
type Member struct {
	ID                  string `json:"id"`
	Addr                string `json:"addr"`
	Status              string `json:"status"`
	Draining            bool   `json:"draining"`
	OwnedPartitions     int    `json:"owned_partitions"`
	OutboundMoves       int    `json:"outbound_moves"`
	Voter               bool   `json:"voter"`
	Leader              bool   `json:"leader"`
	HeartbeatAgeSeconds int64  `json:"heartbeat_age_seconds"`
	// DecommissionBlocked says what keeps a draining member in the cluster.
	DecommissionBlocked []Reason `json:"decommission_blocked,omitempty"`
	// NodeStatus is the member's own report (MembersDetail only).
	NodeStatus  *NodeStatus `json:"node_status,omitempty"`
	StatusError string      `json:"status_error,omitempty"`
}

// NodeStatus is what a member reports of itself (api.md §2.17 node_status).
type NodeStatus struct {
	Node            string `json:"node"`
	Draining        bool   `json:"draining"`
	ProduceInFlight int64  `json:"produce_in_flight"`
	DispatchBacklog uint64 `json:"dispatch_backlog"`
	Quarantine      struct {
		Copies int      `json:"copies"`
		Bytes  int64    `json:"bytes"`
		List   []string `json:"list"`
	} `json:"quarantine"`
	Moves []json.RawMessage `json:"moves"`
}

// Members lists the cluster's members, sorted by id, dead ones included.
func (c *Client) Members(ctx context.Context) ([]Member, error) { return c.members(ctx, nil) }

// MembersDetail is Members with each member's own status, or why it could
// not be read (detail=true).
func (c *Client) MembersDetail(ctx context.Context) ([]Member, error) {
	return c.members(ctx, url.Values{"detail": {"true"}})
}

func (c *Client) members(ctx context.Context, q url.Values) ([]Member, error) {
	var body struct {
		Members []Member `json:"members"`
	}
	if err := c.getJSON(ctx, "/v1/cluster/members", q, &body); err != nil {
		return nil, err
	}
	return body.Members, nil
}
