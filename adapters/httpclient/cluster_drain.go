package httpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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
	// Worker is the destination's report of its move worker, and
	// WorkerError why it could not be read (MovesDetail only).
	Worker      *MoveWorker `json:"worker,omitempty"`
	WorkerError string      `json:"worker_error,omitempty"`
}

// MoveWorker is a destination's report of one move worker (api.md §2.17,
// GET /v1/cluster/moves?detail=true).
type MoveWorker struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Source    string `json:"source"`
	Target    string `json:"target"`
	StartedAt string `json:"started_at,omitempty"` // RFC 3339
	// Phase is copying, frozen, flip_pending, waiting_for_source or blocked.
	Phase       string `json:"phase"`
	Attempts    int    `json:"attempts"`
	LastError   string `json:"last_error,omitempty"`
	CopiedBytes int64  `json:"copied_bytes"`
	// Blocked is copy_unverifiable or source_dead_copy_behind, else "".
	Blocked string `json:"blocked,omitempty"`
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

// DecommissionRefused is a decommission the cluster refuses (409): the node
// could never be drained safely, and nothing changed. It wraps the
// *APIError, so StatusOf reports 409.
type DecommissionRefused struct {
	// Message is the answer's `error`.
	Message string
	// Reasons lists every reason, as the dry run would.
	Reasons []Reason
}

func (e *DecommissionRefused) Error() string {
	codes := make([]string, len(e.Reasons))
	for i, r := range e.Reasons {
		codes[i] = r.Code
	}
	return fmt.Sprintf("http %d: %s (reasons: %s)", http.StatusConflict, e.Message, strings.Join(codes, ", "))
}

func (e *DecommissionRefused) Unwrap() error {
	return &APIError{Status: http.StatusConflict, Message: e.Message}
}

// Decommission marks node id draining (204). A refusal is a
// *DecommissionRefused; other failures are as Client reports them.
func (c *Client) Decommission(ctx context.Context, id string) error {
	_, err := c.do(ctx, request{method: http.MethodPost, path: decommissionPath(id), contentType: "application/json"})
	return refusal(err)
}

// refusal turns a 409 whose body lists reasons into a *DecommissionRefused,
// and returns any other err unchanged.
func refusal(err error) error {
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusConflict {
		return err
	}
	var body struct {
		Reasons []Reason `json:"reasons"`
	}
	if json.Unmarshal(ae.body, &body) != nil || len(body.Reasons) == 0 {
		return err
	}
	return &DecommissionRefused{Message: ae.Message, Reasons: body.Reasons}
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

// Moves lists the partitions being moved, by topic then partition; with
// detail, each with its destination's move worker report (detail=true).
func (c *Client) Moves(ctx context.Context, detail bool) ([]Move, error) {
	var q url.Values
	if detail {
		q = url.Values{"detail": {"true"}}
	}
	var body struct {
		Moves []Move `json:"moves"`
	}
	if err := c.getJSON(ctx, "/v1/cluster/moves", q, &body); err != nil {
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
