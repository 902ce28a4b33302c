package topics

import (
	"context"
	"errors"
	"fmt"

	"github.com/narad/narad/application/releasegate"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// policyGate refuses (412) while a member or a Raft server runs a release
// that does not apply entry type typ (a topic policy named what):
// proposing it would stop that member's state machine.
func (s *Service) policyGate(ctx context.Context, typ meta.EntryType, what string) error {
	h, held, err := releasegate.Check(ctx, s.self, s.store, s.servers, typ)
	switch {
	case errors.Is(err, releasegate.ErrServersUnread):
		return domain.Refuse(domain.ErrUnavailable, "could not read the Raft configuration for the release gate; retry")
	case err != nil:
		return readFailure(err)
	case held:
		return domain.Refuse(domain.ErrPrecondition, fmt.Sprintf(
			"%s runs an older release that cannot store a %s (%s); upgrade every member first",
			releasegate.Node(h), what, h))
	}
	return nil
}

// proposePolicy proposes ev, which sets or clears a policy (named what) of
// topic name, and maps the outcome.
func (s *Service) proposePolicy(ctx context.Context, actor, name string, ev meta.Event, what string) error {
	applied, err := s.store.Propose(ctx, s.envelope(actor, ev))
	if err != nil {
		return proposeFailure(err)
	}
	switch res := applied.Result; res.Code {
	case meta.CodeOK:
		return nil
	case meta.CodeNotFound:
		return domain.ErrTopicNotFound
	case meta.CodeConflict:
		return domain.ErrTopicChanged
	case meta.CodeRefused:
		return domain.Refuse(domain.ErrConflict, res.Detail)
	default:
		return fmt.Errorf("topics: set %s of %q: %w", what, name, res.Err())
	}
}
