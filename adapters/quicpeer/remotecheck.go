package quicpeer

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.PeerRemoteMembers = (*Peers)(nil)

// remoteCheckRequest is RemoteCheck's request (op 36, JSON): the mode and
// its arguments. links: the remote child cursors of Parent this node runs;
// check: the target checks of Remote against Topic (Source a local parent);
// credentials: this node's credential states; posture: its security
// posture (internals.md §7.8); unshipped: Parent's records in its dispatch
// backlog (internals.md §7.9).
type remoteCheckRequest struct {
	Mode   string `json:"mode"`
	Parent string `json:"parent,omitempty"`
	Remote string `json:"remote,omitempty"`
	Topic  string `json:"topic,omitempty"`
	Source string `json:"source,omitempty"`
}

// The modes of op 36.
const (
	remoteCheckModeLinks       = "links"
	remoteCheckModeCheck       = "check"
	remoteCheckModeCredentials = "credentials"
	remoteCheckModePosture     = "posture"
	remoteCheckModeUnshipped   = "unshipped"
)

// remoteCursorsMax bounds a links reply and remoteCredentialsMax a
// credentials reply: sanity bounds against a corrupt reply (a cluster
// holds at most 64 remotes).
const (
	remoteCursorsMax     = 1 << 20
	remoteCredentialsMax = 1024
)

// remoteCursorBody is one cursor of a links reply. NextOffset and
// HighWatermark came later: an owner of an earlier build leaves them out,
// which decodes as -1 (unknown).
type remoteCursorBody struct {
	Partition     int32  `json:"partition"`
	Child         string `json:"child"`
	State         string `json:"state"`
	BlockedAt     int64  `json:"blocked_at"`
	LastOKMs      int64  `json:"last_ok_ms"`
	LastCheckMs   int64  `json:"last_check_ms"`
	Lag           int64  `json:"lag"`
	OldestMs      int64  `json:"oldest_unsent_ms"`
	NextOffset    *int64 `json:"next_offset,omitempty"`
	HighWatermark *int64 `json:"high_watermark,omitempty"`
}

type remoteLinksReply struct {
	Cursors []remoteCursorBody `json:"cursors"`
}

type remoteCredentialsReply struct {
	Credentials []ports.RemoteCredentialReport `json:"credentials"`
}

// RemoteLinks asks node for the remote child cursors of parent it runs.
func (p *Peers) RemoteLinks(ctx context.Context, node, parent string) ([]ports.RemoteCursorReport, error) {
	body, err := p.remoteCheck(ctx, node, remoteCheckRequest{Mode: remoteCheckModeLinks, Parent: parent})
	if err != nil {
		return nil, err
	}
	out, err := decodeRemoteLinks(body)
	if err != nil {
		return nil, unreadableReply("remote links", node, err)
	}
	return out, nil
}

// MemberCheck asks node to run the target checks of req.
func (p *Peers) MemberCheck(ctx context.Context, node string, req ports.RemoteCheckRequest) (ports.RemoteCheckReport, error) {
	body, err := p.remoteCheck(ctx, node, remoteCheckRequest{Mode: remoteCheckModeCheck, Remote: req.Remote, Topic: req.Topic, Source: req.Source})
	if err != nil {
		return ports.RemoteCheckReport{}, err
	}
	var rep ports.RemoteCheckReport
	if err := strictJSON(body, &rep); err != nil || rep.Node == "" || (rep.Result != "pass" && rep.Result != "fail") {
		return rep, unreadableReply("remote check", node, fmt.Errorf("report %+v: %w", rep, ErrBadPayload))
	}
	return rep, nil
}

// Credentials asks node for its credential states.
func (p *Peers) Credentials(ctx context.Context, node string) ([]ports.RemoteCredentialReport, error) {
	body, err := p.remoteCheck(ctx, node, remoteCheckRequest{Mode: remoteCheckModeCredentials})
	if err != nil {
		return nil, err
	}
	var r remoteCredentialsReply
	if err := strictJSON(body, &r); err != nil || len(r.Credentials) > remoteCredentialsMax {
		return nil, unreadableReply("remote credentials", node, fmt.Errorf("%d credentials: %w", len(r.Credentials), ErrBadPayload))
	}
	return r.Credentials, nil
}

// Posture asks node for its security posture.
func (p *Peers) Posture(ctx context.Context, node string) (ports.RemotePosture, error) {
	body, err := p.remoteCheck(ctx, node, remoteCheckRequest{Mode: remoteCheckModePosture})
	if err != nil {
		return ports.RemotePosture{}, err
	}
	var r remotePostureReply
	if err := strictJSON(body, &r); err != nil || r.Node == "" {
		return ports.RemotePosture{}, unreadableReply("remote posture", node, fmt.Errorf("posture %+v: %w", r, ErrBadPayload))
	}
	return ports.RemotePosture{Node: r.Node, SecurityEnabled: r.SecurityEnabled, LegacyClusterAuth: r.LegacyClusterAuth, RaftTLS: r.RaftTLS}, nil
}

// TopicBacklog asks node for topic's records in its dispatch backlog.
func (p *Peers) TopicBacklog(ctx context.Context, node, topic string) (ports.TopicBacklog, error) {
	body, err := p.remoteCheck(ctx, node, remoteCheckRequest{Mode: remoteCheckModeUnshipped, Parent: topic})
	if err != nil {
		return ports.TopicBacklog{}, err
	}
	var r remoteBacklogReply
	if err := strictJSON(body, &r); err != nil {
		return ports.TopicBacklog{}, unreadableReply("remote unshipped", node, err)
	}
	return ports.TopicBacklog{Records: r.Records, Complete: r.Complete}, nil
}

// remoteBacklogReply is an unshipped reply.
type remoteBacklogReply struct {
	Records  uint64 `json:"records"`
	Complete bool   `json:"complete"`
}

// remotePostureReply is a posture reply.
type remotePostureReply struct {
	Node              string `json:"node"`
	SecurityEnabled   bool   `json:"security_enabled"`
	LegacyClusterAuth bool   `json:"legacy_cluster_auth"`
	RaftTLS           bool   `json:"raft_tls"`
}

func (p *Peers) remoteCheck(ctx context.Context, node string, req remoteCheckRequest) ([]byte, error) {
	payload, _ := json.Marshal(req) // plain fields always marshal
	return p.call(ctx, node, OpRemoteCheck, payload)
}

func decodeRemoteLinks(body []byte) ([]ports.RemoteCursorReport, error) {
	var r remoteLinksReply
	if err := strictJSON(body, &r); err != nil {
		return nil, err
	}
	if len(r.Cursors) > remoteCursorsMax {
		return nil, fmt.Errorf("remote links reply of %d cursors: %w", len(r.Cursors), ErrBadPayload)
	}
	out := make([]ports.RemoteCursorReport, len(r.Cursors))
	for i, c := range r.Cursors {
		next, hwm := offsetOrUnknown(c.NextOffset), offsetOrUnknown(c.HighWatermark)
		if c.Partition < 0 || c.Child == "" || c.State == "" || c.BlockedAt < -1 || c.Lag < -1 || next < -1 || hwm < -1 {
			return nil, fmt.Errorf("remote cursor %+v out of range: %w", c, ErrBadPayload)
		}
		out[i] = ports.RemoteCursorReport{Partition: c.Partition, Child: c.Child, State: c.State, BlockedAt: c.BlockedAt,
			LastOKMs: c.LastOKMs, LastCheckMs: c.LastCheckMs, Lag: c.Lag, OldestUnsentMs: c.OldestMs, NextOffset: next, HighWatermark: hwm}
	}
	return out, nil
}

// offsetOrUnknown is an optional offset of a links reply, -1 when absent.
func offsetOrUnknown(v *int64) int64 {
	if v == nil {
		return -1
	}
	return *v
}

func decodeRemoteCheckRequest(p []byte) (remoteCheckRequest, error) {
	var req remoteCheckRequest
	if err := strictJSON(p, &req); err != nil {
		return req, err
	}
	switch req.Mode {
	case remoteCheckModeLinks, remoteCheckModeUnshipped:
		if domain.ValidateTopicName(req.Parent) != nil {
			return req, fmt.Errorf("remote check parent: %w", ErrBadPayload)
		}
	case remoteCheckModeCheck:
		if req.Remote == "" || domain.ValidateTopicName(req.Topic) != nil || req.Source != "" && domain.ValidateTopicName(req.Source) != nil {
			return req, fmt.Errorf("remote check arguments: %w", ErrBadPayload)
		}
	case remoteCheckModeCredentials, remoteCheckModePosture:
	default:
		return req, fmt.Errorf("remote check mode %q: %w", req.Mode, domain.ErrInvalidArgument)
	}
	return req, nil
}

// RegisterRemoteCheck serves RemoteCheck (op 36) with m. It panics on a
// nil m.
func RegisterRemoteCheck(srv *Server, m ports.RemoteMember) {
	if m == nil {
		panic("quicpeer: nil remote member")
	}
	srv.Handle(OpRemoteCheck, func(ctx context.Context, p []byte) ([]byte, error) {
		req, err := decodeRemoteCheckRequest(p)
		if err != nil {
			return errReply(err), nil
		}
		var reply any
		switch req.Mode {
		case remoteCheckModeLinks:
			reply = linksReply(m.RemoteLinks(req.Parent))
		case remoteCheckModeCheck:
			rep, err := m.MemberCheck(ctx, ports.RemoteCheckRequest{Remote: req.Remote, Topic: req.Topic, Source: req.Source})
			if err != nil {
				return errReply(err), nil
			}
			reply = rep
		case remoteCheckModeUnshipped:
			b, err := m.TopicBacklog(ctx, req.Parent)
			if err != nil {
				return errReply(err), nil
			}
			reply = remoteBacklogReply{Records: b.Records, Complete: b.Complete}
		case remoteCheckModePosture:
			pos := m.Posture()
			reply = remotePostureReply{Node: pos.Node, SecurityEnabled: pos.SecurityEnabled,
				LegacyClusterAuth: pos.LegacyClusterAuth, RaftTLS: pos.RaftTLS}
		default:
			reply = remoteCredentialsReply{Credentials: m.Credentials()}
		}
		b, _ := json.Marshal(reply) // plain fields always marshal
		return okReply(b), nil
	})
}

func linksReply(reports []ports.RemoteCursorReport) remoteLinksReply {
	body := remoteLinksReply{Cursors: make([]remoteCursorBody, len(reports))}
	for i, c := range reports {
		body.Cursors[i] = remoteCursorBody{Partition: c.Partition, Child: c.Child, State: c.State, BlockedAt: c.BlockedAt,
			LastOKMs: c.LastOKMs, LastCheckMs: c.LastCheckMs, Lag: c.Lag, OldestMs: c.OldestUnsentMs,
			NextOffset: &c.NextOffset, HighWatermark: &c.HighWatermark}
	}
	return body
}
