package remotes

import (
	"context"
	"encoding/hex"
	"errors"
	"io"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// The write path of internals.md §7.8: the node that took a remote write
// authorizes and validates it, then hands the one entry to the metadata
// leader as a RemoteWrite (op 35); the leader checks the release gate
// again, proposes, and writes the authoritative audit line with the
// request id both lines share.

// request is one remotes request as it travels through a use case: its
// audit event name and its id.
type request struct {
	event string
	id    string
}

type requestKey struct{}

// begin tags ctx with a new request of event.
func (s *Service) begin(ctx context.Context, event string) context.Context {
	var b [requestIDBytes]byte
	id := ""
	if _, err := io.ReadFull(s.d.Random, b[:]); err == nil {
		id = hex.EncodeToString(b[:])
	}
	return context.WithValue(ctx, requestKey{}, request{event: event, id: id})
}

func requestOf(ctx context.Context) request {
	r, _ := ctx.Value(requestKey{}).(request)
	return r
}

// propose hands ev, asked by p, to the leader (or proposes it here when
// this node leads or has no peers to ask), then waits until this node's
// replica applied it, so the answer can be read back locally.
func (s *Service) propose(ctx context.Context, p access.Principal, ev meta.Event) (meta.Result, error) {
	req := requestOf(ctx)
	w := ports.RemoteWrite{Op: req.event, Actor: p.Name, RequestID: req.id,
		Envelope: meta.Envelope{Actor: p.Name, AtMs: s.d.Clock.Now().UnixMilli(), Event: ev}}
	if s.d.Writer == nil || s.d.Store.IsLeader() {
		applied, err := s.lead(ctx, w)
		return applied.Result, err
	}
	leader, ok := s.leaderNode()
	if !ok {
		return meta.Result{}, domain.Refuse(domain.ErrUnavailable, "no metadata leader is known; retry")
	}
	applied, err := s.d.Writer.RemoteWrite(ctx, leader, w)
	if err != nil {
		return meta.Result{}, leaderFailure(leader, err)
	}
	if err := s.d.Store.Barrier(ctx); err != nil {
		return meta.Result{}, proposeFailure(err)
	}
	return applied.Result, nil
}

// leaderNode names the metadata leader's member id.
func (s *Service) leaderNode() (string, bool) {
	rid, ok := s.d.Store.Leader()
	if !ok {
		return "", false
	}
	members, err := s.d.Store.Members()
	if err != nil {
		return "", false
	}
	for _, m := range members {
		if meta.ReplicaID(m.ID) == rid {
			return m.ID, true
		}
	}
	return "", false
}

// leaderFailure maps what the leader answered a RemoteWrite: its release
// gate's refusal names it, a leader without op 35 runs an older release
// (412), a lost leadership or a transport failure is retryable (503).
func leaderFailure(leader string, err error) error {
	var r *domain.Refusal
	switch {
	case errors.Is(err, domain.ErrPrecondition) && errors.As(err, &r):
		return &GateError{Gate: GateRelease, Members: []GateMember{{Node: leader, Reason: r.Detail}}}
	case errors.Is(err, domain.ErrOlderRelease):
		return &GateError{Gate: GateRelease, Members: []GateMember{{Node: leader, Reason: "the leader runs an older release"}}}
	case errors.Is(err, domain.ErrInvalidArgument):
		return domain.Refuse(domain.ErrInvalidArgument, err.Error())
	}
	return proposeFailure(err)
}

// LeaderWrite proposes w handed over by another node (the serving side of
// op 35). A release gate's refusal crosses the wire as a 412 refusal that
// names the holder in its message.
func (s *Service) LeaderWrite(ctx context.Context, w ports.RemoteWrite) (ports.MetaApplied, error) {
	applied, err := s.lead(ctx, w)
	var g *GateError
	if errors.As(err, &g) {
		return applied, domain.Refuse(domain.ErrPrecondition, g.Error())
	}
	return applied, err
}

// lead proposes w on this node, the leader: the entry must be of a remote
// type, the release gate is checked again, and the authoritative audit
// line records committed or refused.
func (s *Service) lead(ctx context.Context, w ports.RemoteWrite) (ports.MetaApplied, error) {
	applied, err := s.leadWrite(ctx, w)
	outcome, reason := ports.AuditCommitted, ""
	switch {
	case err != nil && refused(err):
		outcome, reason = ports.AuditRefused, err.Error()
	case err != nil:
		outcome, reason = ports.AuditFailed, err.Error()
	case !applied.Result.OK():
		outcome, reason = ports.AuditRefused, applied.Result.String()
	}
	subject := ""
	if w.Envelope.Event != nil {
		subject = w.Envelope.Event.Subject()
	}
	s.d.Audit.Record(ports.AuditEvent{Event: w.Op, Actor: w.Actor, Subject: subject, Outcome: outcome, Reason: reason,
		RequestID: w.RequestID, Leader: true})
	return applied, err
}

func (s *Service) leadWrite(ctx context.Context, w ports.RemoteWrite) (ports.MetaApplied, error) {
	if w.Envelope.Event == nil || !meta.IsRemoteType(w.Envelope.Event.Type()) {
		return ports.MetaApplied{}, domain.Refuse(domain.ErrInvalidArgument, "a remote write carries a remote entry")
	}
	if s.d.Writer != nil && !s.d.Store.IsLeader() {
		return ports.MetaApplied{}, domain.ErrNotMetaLeader
	}
	if err := s.releaseGate(ctx, w.Envelope.Event.Type()); err != nil {
		return ports.MetaApplied{}, err
	}
	applied, err := s.d.Store.Propose(ctx, w.Envelope)
	if err != nil {
		return ports.MetaApplied{}, proposeFailure(err)
	}
	return applied, nil
}
