package topics

import (
	"context"
	"errors"
	"fmt"

	"github.com/narad/narad/application/releasegate"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// RedeliveryRequest is a redelivery backoff as the client sent it (our
// extension, docs/api-extensions.md "Redelivery backoff"): InitialMs is
// required, the rest default (multiplier 2, max_ms the longer of 10 minutes
// and initial_ms, jitter 0).
type RedeliveryRequest struct {
	InitialMs  *int64
	Multiplier *float64
	MaxMs      *int64
	Jitter     *float64
}

// WithRaftServers lets the release gate of the newer topic entry types
// count the metadata shard's Raft servers that have no member record yet.
// Without it the gate reads the member records only.
func WithRaftServers(r releasegate.Servers) Option { return func(s *Service) { s.servers = r } }

// resolveRedelivery checks r's ranges and fills its defaults.
func resolveRedelivery(r RedeliveryRequest) (meta.Redelivery, error) {
	if r.InitialMs == nil {
		return meta.Redelivery{}, invalidArg("redelivery.initial_ms is required")
	}
	p := meta.Redelivery{InitialMs: *r.InitialMs, Multiplier: meta.RedeliveryMultiplierUnset,
		MaxMs: max(meta.RedeliveryMaxUnsetMs, *r.InitialMs)}
	if r.Multiplier != nil {
		p.Multiplier = *r.Multiplier
	}
	if r.MaxMs != nil {
		p.MaxMs = *r.MaxMs
	}
	if r.Jitter != nil {
		p.Jitter = *r.Jitter
	}
	switch {
	case p.InitialMs < 1 || p.InitialMs > meta.RedeliveryWaitMaxMs:
		return p, invalidArg("redelivery.initial_ms must be from 1 to %d (milliseconds)", meta.RedeliveryWaitMaxMs)
	case p.MaxMs < p.InitialMs || p.MaxMs > meta.RedeliveryWaitMaxMs:
		return p, invalidArg("redelivery.max_ms must be from initial_ms (%d) to %d (milliseconds)", p.InitialMs, meta.RedeliveryWaitMaxMs)
	case !(p.Multiplier >= 1 && p.Multiplier <= meta.RedeliveryMultiplierMax):
		return p, invalidArg("redelivery.multiplier must be from 1 to %v", meta.RedeliveryMultiplierMax)
	case !(p.Jitter >= 0 && p.Jitter <= 1):
		return p, invalidArg("redelivery.jitter must be from 0 to 1 (a fraction of the wait)")
	}
	return p, nil
}

// redeliveryGate refuses (412) while a member runs a release that cannot store
// the policy (policyGate).
func (s *Service) redeliveryGate(ctx context.Context) error {
	return s.policyGate(ctx, meta.TypeSetTopicRedelivery, "redelivery policy")
}

// setRedelivery proposes p (nil clears) on incarnation t and maps the outcome.
func (s *Service) setRedelivery(ctx context.Context, actor string, t meta.Topic, p *meta.Redelivery) error {
	return s.proposePolicy(ctx, actor, t.Name, &meta.SetTopicRedelivery{Name: t.Name, ID: t.ID, Redelivery: p}, "redelivery policy")
}

// createRedelivery resolves a create's policy and passes the release gate
// before anything is proposed; nil when the create carries none.
func (s *Service) createRedelivery(ctx context.Context, req CreateRequest) (*meta.Redelivery, error) {
	if req.Redelivery == nil {
		return nil, nil
	}
	p, err := resolveRedelivery(*req.Redelivery)
	if err != nil {
		return nil, err
	}
	if err := s.redeliveryGate(ctx); err != nil {
		return nil, err
	}
	return &p, nil
}

// setCreatedRedelivery sets the policy of the topic a create just made (a
// second entry: the create itself has applied whatever happens here) and
// reads the topic back.
func (s *Service) setCreatedRedelivery(ctx context.Context, req CreateRequest, t meta.Topic, p *meta.Redelivery) (meta.Topic, error) {
	if err := s.setRedelivery(ctx, req.Caller.Name, t, p); err != nil {
		return meta.Topic{}, domain.Refuse(domain.ErrUnavailable, fmt.Sprintf(
			"topic %q was created but its redelivery policy may not be set (%v): read the topic back and set the policy with an alter", t.Name, err))
	}
	return s.readTopic(t.Name)
}

// alterRedelivery resolves an alter's policy and passes the release gate
// before any group is applied; nil when the alter sets none.
func (s *Service) alterRedelivery(ctx context.Context, req AlterRequest) (*meta.Redelivery, error) {
	if req.Redelivery == nil && !req.ClearRedelivery {
		return nil, nil
	}
	var p *meta.Redelivery
	if req.Redelivery != nil {
		r, err := resolveRedelivery(*req.Redelivery)
		if err != nil {
			return nil, err
		}
		p = &r
	}
	return p, s.redeliveryGate(ctx)
}

// applyRedelivery proposes the alter's policy (nil clears) on the
// incarnation it reads, judging the caller again on that incarnation and
// retrying once after a lost race.
func (s *Service) applyRedelivery(ctx context.Context, req AlterRequest, p *meta.Redelivery) error {
	for attempt := 1; ; attempt++ {
		t, err := s.readTopic(req.Name)
		if err == nil {
			err = mayModify(req.Caller, t)
		}
		if err != nil {
			return err
		}
		err = s.setRedelivery(ctx, req.Caller.Name, t, p)
		if !errors.Is(err, domain.ErrTopicChanged) || attempt >= casAttempts {
			return err
		}
	}
}
