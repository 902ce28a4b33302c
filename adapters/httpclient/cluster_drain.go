package httpclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// Reason is one reason a decommission is refused (api.md §2.17).
type Reason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// DecommissionVerdict is the answer of a decommission's dry run.
type DecommissionVerdict struct {
	Member            string   `json:"member"`
	WouldDecommission bool     `json:"would_decommission"`
	Reasons           []Reason `json:"reasons"`
	Voter             bool     `json:"voter"`
	OwnedPartitions   int      `json:"owned_partitions"`
	InboundMoves      int      `json:"inbound_moves"`
}

// Move is one partition being moved, as GET /v1/cluster/moves lists it.
type Move struct {
	Topic      string `json:"topic"`
	Partition  int    `json:"partition"`
	From       string `json:"from"`
	To         string `json:"to"`
	FromStatus string `json:"from_status"`
	ToStatus   string `json:"to_status"`
	Blocked    string `json:"blocked,omitempty"`
}

// AbortedMove is the answer of a move's abort.
type AbortedMove struct {
	Move Move   `json:"move"`
	Note string `json:"note"`
}

// Forgotten is the answer of a forget.
type Forgotten struct {
	ID    string `json:"id"`
	Voter bool   `json:"voter"`
}

func decommissionPath(id string) string {
	return "/v1/cluster/members/" + url.PathEscape(id) + "/decommission"
}

// Decommission marks node id draining (204). A refusal is an *APIError
// with status 409 whose message lists every reason.
func (c *Client) Decommission(ctx context.Context, id string) error {
	_, err := c.do(ctx, request{method: http.MethodPost, path: decommissionPath(id), contentType: "application/json"})
	return err
}

// DecommissionDryRun asks whether node id could be decommissioned now,
// changing nothing.
func (c *Client) DecommissionDryRun(ctx context.Context, id string) (DecommissionVerdict, error) {
	var v DecommissionVerdict
	path := decommissionPath(id)
	rep, err := c.do(ctx, request{method: http.MethodPost, path: path, query: url.Values{"dry_run": {"true"}}, contentType: "application/json"})
	if err == nil {
		err = decodeReply(http.MethodPost, path, rep, &v)
	}
	return v, err
}

// CancelDecommission clears node id's drain mark (204).
func (c *Client) CancelDecommission(ctx context.Context, id string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: decommissionPath(id), contentType: "application/json"})
	return err
}

// ForgetMember drops a Raft server that has no member record.
func (c *Client) ForgetMember(ctx context.Context, id string) (Forgotten, error) {
	var f Forgotten
	path := "/v1/cluster/members/" + url.PathEscape(id) + "/forget"
	rep, err := c.do(ctx, request{method: http.MethodPost, path: path, contentType: "application/json"})
	if err == nil {
		err = decodeReply(http.MethodPost, path, rep, &f)
	}
	return f, err
}

// Moves lists the partitions being moved, by topic then partition.
func (c *Client) Moves(ctx context.Context) ([]Move, error) {
	var body struct {
		Moves []Move `json:"moves"`
	}
	if err := c.getJSON(ctx, "/v1/cluster/moves", nil, &body); err != nil {
		return nil, err
	}
	return body.Moves, nil
}

// AbortMove clears the move target of topic's partition; with target set,
// only a move to that node.
func (c *Client) AbortMove(ctx context.Context, topic string, partition int, target string) (AbortedMove, error) {
	var a AbortedMove
	path := "/v1/cluster/moves/" + url.PathEscape(topic) + "/" + strconv.Itoa(partition) + "/abort"
	var q url.Values
	if target != "" {
		q = url.Values{"target": {target}}
	}
	rep, err := c.do(ctx, request{method: http.MethodPost, path: path, query: q, contentType: "application/json"})
	if err == nil {
		err = decodeReply(http.MethodPost, path, rep, &a)
	}
	return a, err
}
