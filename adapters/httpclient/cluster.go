package httpclient

import "context"

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
	StatusError         string `json:"status_error,omitempty"`
}

// Members lists the cluster's members, sorted by id, dead ones included.
func (c *Client) Members(ctx context.Context) ([]Member, error) {
	var body struct {
		Members []Member `json:"members"`
	}
	if err := c.getJSON(ctx, "/v1/cluster/members", nil, &body); err != nil {
		return nil, err
	}
	return body.Members, nil
}
