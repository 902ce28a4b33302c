package httpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// RemoteAttach is the body of POST /v1/topics/{parent}/children that
// creates a remote child (api.md §2.10.2). Zero optional fields are left
// out, so the server applies its defaults.
type RemoteAttach struct {
	Child       string `json:"child"`
	Remote      string `json:"remote"`
	RemoteTopic string `json:"remote_topic,omitempty"`
	From        string `json:"from,omitempty"`
	Lanes       int    `json:"lanes,omitempty"`
	DelayMs     int64  `json:"delay_ms,omitempty"`
	DryRun      bool   `json:"dry_run,omitempty"`
}

// RemoteChild is the 201 answer of a remote attach: the stub, with the
// leader's warnings.
type RemoteChild struct {
	Topic
	Warnings []string `json:"warnings,omitempty"`
}

// AttachDryRun is the 200 answer of a remote attach with dry_run: what the
// checks found and where the link would start; nothing was written.
type AttachDryRun struct {
	DryRun        bool           `json:"dry_run"`
	AttachOffsets []int64        `json:"attach_offsets"`
	Checks        []MemberReport `json:"checks"`
	Warnings      []string       `json:"warnings"`
	Capabilities  *Capabilities  `json:"capabilities,omitempty"`
}

// Capabilities is what the leader's probe found the target takes.
type Capabilities struct {
	MaxMessages int  `json:"max_messages"`
	Zstd        bool `json:"zstd"`
}

// RemoteAttachResult is either the created stub or, for a dry run, the report.
type RemoteAttachResult struct {
	Created *RemoteChild
	DryRun  *AttachDryRun
}

// MemberReport is one member's attach checks against a target (api.md §2.10.2).
type MemberReport struct {
	Node               string   `json:"node"`
	Result             string   `json:"result"`
	Class              string   `json:"class,omitempty"`
	CredentialVersion  int64    `json:"credential_version"`
	TargetID           string   `json:"target_id,omitempty"`
	TargetServesIDs    bool     `json:"target_serves_ids"`
	RTTMs              int64    `json:"rtt_ms"`
	LaneCapacityPerS   float64  `json:"lane_capacity_per_s"`
	ServerCertNotAfter string   `json:"server_cert_not_after,omitempty"`
	Warnings           []string `json:"warnings,omitempty"`
	Posture            *Posture `json:"posture,omitempty"`
}

// Posture is a member's security posture as a check reports it.
type Posture struct {
	SecurityEnabled   bool `json:"security_enabled"`
	LegacyClusterAuth bool `json:"legacy_cluster_auth"`
	RaftTLS           bool `json:"raft_tls"`
	APIHopEncrypted   bool `json:"api_hop_encrypted"`
}

// BlockedAt is the parent record a remote child's link is stuck on.
type BlockedAt struct {
	Partition int    `json:"partition"`
	Offset    int64  `json:"offset"`
	State     string `json:"state"`
}

// RemoteRefusal is an error answer of a remote route whose body says more
// than `error`: a check's class and reports, the links that use a remote,
// the unshipped records of a detach, the record a skip does not match. It
// wraps the *APIError, so StatusOf reports its status.
type RemoteRefusal struct {
	Class           string           `json:"class"`
	Checks          []MemberReport   `json:"checks"`
	Links           []string         `json:"links"`
	LagMessages     *int64           `json:"lag_messages"`
	LagComplete     bool             `json:"lag_complete"`
	DispatchBacklog map[string]int64 `json:"dispatch_backlog"`
	NotAnswering    []string         `json:"not_answering"`
	BlockedAt       *BlockedAt       `json:"blocked_at"`
	api             *APIError
}

func (e *RemoteRefusal) Error() string { return e.api.Error() }

func (e *RemoteRefusal) Unwrap() error { return e.api }

// remoteRefusal turns an error answer whose body carries any detail field
// into a *RemoteRefusal, and returns any other err unchanged.
func remoteRefusal(err error) error {
	var ae *APIError
	if !errors.As(err, &ae) {
		return err
	}
	r := &RemoteRefusal{api: ae}
	if json.Unmarshal(ae.body, r) != nil {
		return err
	}
	if r.Class == "" && len(r.Checks) == 0 && len(r.Links) == 0 && r.LagMessages == nil && r.BlockedAt == nil {
		return err
	}
	return r
}

// AttachChild links an existing topic as a fan-out child of parent (200,
// api.md §2.10.1), a delay child when delayMs > 0, and returns the parent.
func (c *Client) AttachChild(ctx context.Context, parent, child string, delayMs int64) (*Topic, error) {
	body := struct {
		Child   string `json:"child"`
		DelayMs int64  `json:"delay_ms,omitempty"`
	}{child, delayMs}
	var t Topic
	if err := c.sendJSON(ctx, http.MethodPost, topicPath(parent, "/children"), body, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// AttachRemoteChild creates a remote child under parent: 201 with the stub,
// or with DryRun set 200 with the checks' report and nothing written.
func (c *Client) AttachRemoteChild(ctx context.Context, parent string, a RemoteAttach) (*RemoteAttachResult, error) {
	path := topicPath(parent, "/children")
	b, err := marshalJSON(a)
	if err != nil {
		return nil, err
	}
	rep, err := c.do(ctx, request{method: http.MethodPost, path: path, body: b, contentType: "application/json"})
	if err != nil {
		return nil, remoteRefusal(err)
	}
	var out RemoteAttachResult
	var into any
	switch {
	case rep.status == http.StatusCreated && !a.DryRun:
		out.Created = &RemoteChild{}
		into = out.Created
	case rep.status == http.StatusOK && a.DryRun:
		out.DryRun = &AttachDryRun{}
		into = out.DryRun
	default:
		return nil, fmt.Errorf("POST %s: status %d for dry_run=%t: %w", path, rep.status, a.DryRun, ErrMalformedReply)
	}
	if err := decodeReply(http.MethodPost, path, rep, into); err != nil {
		return nil, err
	}
	return &out, nil
}

// DetachChild detaches child from parent (204). For a remote child this
// deletes the stub; force abandons records not yet shipped (force=true),
// without which they make a *RemoteRefusal (409, lag in LagMessages).
func (c *Client) DetachChild(ctx context.Context, parent, child string, force bool) error {
	var q url.Values
	if force {
		q = url.Values{"force": {"true"}}
	}
	_, err := c.do(ctx, request{method: http.MethodDelete, path: childPath(parent, child, ""), query: q})
	return remoteRefusal(err)
}

// PauseRemoteChild stops a remote child's sending and returns the stub;
// an empty reason is left out.
func (c *Client) PauseRemoteChild(ctx context.Context, parent, child, reason string) (*Topic, error) {
	body := struct {
		Reason string `json:"reason,omitempty"`
	}{reason}
	return c.remoteChildAction(ctx, childPath(parent, child, "/pause"), body)
}

// ResumeRemoteChild re-runs the attach checks and lets the link send;
// acceptTarget records a target recreated since the attach.
func (c *Client) ResumeRemoteChild(ctx context.Context, parent, child string, acceptTarget bool) (*Topic, error) {
	body := struct {
		AcceptTarget bool `json:"accept_target"`
	}{acceptTarget}
	return c.remoteChildAction(ctx, childPath(parent, child, "/resume"), body)
}

// SkipRemoteChild lets a remote child drop the one parent record it is
// stuck on, at partition and offset.
func (c *Client) SkipRemoteChild(ctx context.Context, parent, child string, partition int, offset int64) (*Topic, error) {
	body := struct {
		Partition int   `json:"partition"`
		Offset    int64 `json:"offset"`
	}{partition, offset}
	return c.remoteChildAction(ctx, childPath(parent, child, "/skip"), body)
}

// remoteChildAction POSTs body to a pause, resume or skip route and
// returns the stub of the 200 answer.
func (c *Client) remoteChildAction(ctx context.Context, path string, body any) (*Topic, error) {
	var t Topic
	if err := c.sendJSON(ctx, http.MethodPost, path, body, &t); err != nil {
		return nil, remoteRefusal(err)
	}
	return &t, nil
}

// childPath is /v1/topics/<parent>/children/<child><suffix>, escaped.
func childPath(parent, child, suffix string) string {
	return topicPath(parent, "/children/"+url.PathEscape(child)+suffix)
}
