package topics

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/deadletter"
	"github.com/narad/narad/domain/meta"
)

// DeadLetterRequest is a dead-letter policy as the client sent it (our
// extension, docs/api-extensions.md "Dead letters"): both fields are
// required, and Topic must name an existing topic other than the policy's
// own.
type DeadLetterRequest struct {
	Topic           *string
	MaxReceiveCount *int64
}

// resolveDeadLetter checks r as the policy of topic origin by the rules of
// deadletter.Policy. It does not look the dead-letter topic up.
func resolveDeadLetter(origin string, r DeadLetterRequest) (meta.DeadLetter, error) {
	switch {
	case r.Topic == nil:
		return meta.DeadLetter{}, invalidArg("dead_letter.topic is required")
	case r.MaxReceiveCount == nil:
		return meta.DeadLetter{}, invalidArg("dead_letter.max_receive_count is required")
	}
	p := deadletter.Policy{Topic: *r.Topic}
	if n := *r.MaxReceiveCount; n >= 0 && n <= math.MaxUint32 {
		p.MaxReceiveCount = uint32(n) // a negative count or one past uint32 stays 0: out of bounds
	}
	if err := p.Validate(origin); err != nil {
		return meta.DeadLetter{}, invalidArg("%s", deadletter.Rule(err))
	}
	return meta.DeadLetter{Topic: p.Topic, MaxReceiveCount: p.MaxReceiveCount}, nil
}

// deadLetterTargetExists refuses a policy whose topic does not exist now
// (read from the leader when this replica does not have it).
func (s *Service) deadLetterTargetExists(ctx context.Context, p meta.DeadLetter) error {
	_, err := s.readCaughtUp(ctx, p.Topic)
	if errors.Is(err, domain.ErrTopicNotFound) {
		return invalidArg("dead_letter.topic names no topic: %s", p.Topic)
	}
	return err
}

// deadLetterGate refuses (412) while a member runs a release that cannot store
// the policy (policyGate).
func (s *Service) deadLetterGate(ctx context.Context) error {
	return s.policyGate(ctx, meta.TypeSetTopicDeadLetter, "dead-letter policy")
}

// setDeadLetter proposes p (nil clears) on incarnation t and maps the outcome.
func (s *Service) setDeadLetter(ctx context.Context, actor string, t meta.Topic, p *meta.DeadLetter) error {
	return s.proposePolicy(ctx, actor, t.Name, &meta.SetTopicDeadLetter{Name: t.Name, ID: t.ID, DeadLetter: p}, "dead-letter policy")
}

// checkDeadLetter resolves a policy of topic origin, checks that its topic
// exists and passes the release gate, before anything is proposed.
func (s *Service) checkDeadLetter(ctx context.Context, origin string, r DeadLetterRequest) (*meta.DeadLetter, error) {
	p, err := resolveDeadLetter(origin, r)
	if err != nil {
		return nil, err
	}
	if err := s.deadLetterTargetExists(ctx, p); err != nil {
		return nil, err
	}
	if err := s.deadLetterGate(ctx); err != nil {
		return nil, err
	}
	return &p, nil
}

// createDeadLetter checks a create's policy; nil when the create carries
// none.
func (s *Service) createDeadLetter(ctx context.Context, req CreateRequest) (*meta.DeadLetter, error) {
	if req.DeadLetter == nil {
		return nil, nil
	}
	return s.checkDeadLetter(ctx, req.Name, *req.DeadLetter)
}

// setCreatedDeadLetter sets the policy of the topic a create just made (an
// entry of its own: the create has applied whatever happens here) and
// reads the topic back.
func (s *Service) setCreatedDeadLetter(ctx context.Context, req CreateRequest, t meta.Topic, p *meta.DeadLetter) (meta.Topic, error) {
	if err := s.setDeadLetter(ctx, req.Caller.Name, t, p); err != nil {
		return meta.Topic{}, domain.Refuse(domain.ErrUnavailable, fmt.Sprintf(
			"topic %q was created but its dead-letter policy may not be set (%v): read the topic back and set the policy with an alter", t.Name, err))
	}
	return s.readTopic(t.Name)
}

// alterDeadLetter checks an alter's policy before any group is applied;
// nil when the alter sets none (a clear passes the release gate only).
func (s *Service) alterDeadLetter(ctx context.Context, req AlterRequest) (*meta.DeadLetter, error) {
	switch {
	case req.DeadLetter != nil:
		return s.checkDeadLetter(ctx, req.Name, *req.DeadLetter)
	case req.ClearDeadLetter:
		return nil, s.deadLetterGate(ctx)
	}
	return nil, nil
}

// applyDeadLetter proposes the alter's policy (nil clears) on the
// incarnation it reads, judging the caller again on that incarnation and
// retrying once after a lost race.
func (s *Service) applyDeadLetter(ctx context.Context, req AlterRequest, p *meta.DeadLetter) error {
	for attempt := 1; ; attempt++ {
		t, err := s.readTopic(req.Name)
		if err == nil {
			err = mayModify(req.Caller, t)
		}
		if err != nil {
			return err
		}
		err = s.setDeadLetter(ctx, req.Caller.Name, t, p)
		if !errors.Is(err, domain.ErrTopicChanged) || attempt >= casAttempts {
			return err
		}
	}
}
