package topics

import (
	"context"
	"errors"
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// proposeChild creates req.Name as a fan-out child of req.Parent: create,
// attach and (afterwards) place in one entry, type 23, so a refused attach
// leaves no half-created topic behind (api.md §2.5, internals.md §6.6). The
// attach point is read from the parent's owners before proposing; a parent
// recreated under the request is retried once, then answers
// domain.ErrTopicChanged.
func (s *Service) proposeChild(ctx context.Context, req CreateRequest, ev *meta.CreateTopicWith) error {
	for range casAttempts {
		parent, err := s.readCaughtUp(ctx, req.Parent)
		if err != nil {
			return err
		}
		if err := mayModify(req.Caller, parent); err != nil {
			return err
		}
		spec, err := s.childSpec(ctx, req, parent)
		if err != nil {
			return err
		}
		entry := *ev
		entry.Parent = spec
		if req.Partitions == 0 {
			entry.Partitions = parent.Partitions
		}
		applied, err := s.store.Propose(ctx, s.envelope(req.Caller.Name, &entry))
		if err != nil {
			return proposeFailure(err)
		}
		switch res := applied.Result; res.Code {
		case meta.CodeOK:
			return nil
		case meta.CodeExists:
			return s.existsRefusal(req.Name)
		case meta.CodeNotFound:
			return domain.ErrTopicNotFound
		case meta.CodeRefused:
			return linkRefusal(res.Detail)
		case meta.CodeConflict:
			continue // the parent was recreated between the read and the apply
		default:
			return fmt.Errorf("topics: create child %q of %q: %w", req.Name, req.Parent, res.Err())
		}
	}
	return domain.ErrTopicChanged
}

// readCaughtUp reads a topic, asking the leader to catch this replica up
// before answering that it does not exist (a parent or child named by a
// link request may have been created on another node a moment ago).
func (s *Service) readCaughtUp(ctx context.Context, name string) (meta.Topic, error) {
	t, err := s.readTopic(name)
	if !errors.Is(err, domain.ErrTopicNotFound) {
		return t, err
	}
	if berr := s.store.Barrier(ctx); berr != nil {
		return meta.Topic{}, domain.Refuse(domain.ErrUnavailable,
			"control plane temporarily unavailable: could not confirm topic "+name+" with the leader: "+berr.Error())
	}
	return s.readTopic(name)
}

// childSpec checks the link rules against the parent and resolves the
// attach: a fresh epoch and the parent's committed high watermarks.
func (s *Service) childSpec(ctx context.Context, req CreateRequest, parent meta.Topic) (*meta.ParentSpec, error) {
	err := s.checkLinkable(linkReq{
		parent: parent, child: meta.Topic{Name: req.Name}, childSchema: req.Schema, delayMs: req.FanoutDelayMs,
	})
	if err != nil {
		return nil, err
	}
	epoch, err := s.newEpoch()
	if err != nil {
		return nil, err
	}
	offsets, err := s.attachPoint(ctx, parent)
	if err != nil {
		return nil, err
	}
	return &meta.ParentSpec{Name: parent.Name, ID: parent.ID, Epoch: epoch, DelayMs: req.FanoutDelayMs, Offsets: offsets}, nil
}
