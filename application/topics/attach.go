package topics

import (
	"context"
	"fmt"
	"github.com/narad/narad/domain/access"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// AttachRequest links an existing topic under a parent (api.md §2.10.1).
type AttachRequest struct {
	// Caller is who asks: the owner of both topics, or an admin.
	Caller  access.Principal
	Parent  string
	Child   string
	DelayMs int64
}

// Attach links req.Child under req.Parent from the parent's current
// committed high watermarks on, and returns the parent. Placement of the
// child is left as it is. Either topic recreated under the request twice
// answers domain.ErrTopicChanged.
func (s *Service) Attach(ctx context.Context, req AttachRequest) (meta.Topic, error) {
	if err := checkAttachFields(req); err != nil {
		return meta.Topic{}, err
	}
	unlock := s.names.lock(req.Child)
	defer unlock()
	for range casAttempts {
		done, err := s.attachOnce(ctx, req)
		switch {
		case err != nil:
			return meta.Topic{}, err
		case done:
			return s.readTopic(req.Parent)
		}
	}
	return meta.Topic{}, domain.ErrTopicChanged
}

func checkAttachFields(req AttachRequest) error {
	switch {
	case req.Child == "":
		return domain.Refuse(domain.ErrInvalidArgument, "child is required")
	case req.DelayMs < 0:
		return domain.Refuse(domain.ErrInvalidArgument, "delay_ms must be >= 0")
	case req.Child == req.Parent:
		return invalidArg("a topic cannot be attached to itself")
	case req.DelayMs > FanoutDelayMaxMs:
		return invalidArg("delay_ms (%d) exceeds the maximum of %d (1 year)", req.DelayMs, FanoutDelayMaxMs)
	}
	return nil
}

// attachOnce reads both topics, checks the rules, resolves the attach
// point and proposes the link checking both incarnations. It reports done
// on success and false, nil when an incarnation changed meanwhile.
func (s *Service) attachOnce(ctx context.Context, req AttachRequest) (bool, error) {
	parent, err := s.readCaughtUp(ctx, req.Parent)
	if err != nil {
		return false, err
	}
	child, err := s.readCaughtUp(ctx, req.Child)
	if err != nil {
		return false, err
	}
	err = access.Decide(req.Caller, access.Request{Op: access.OpAttach, Parent: accessTopic(parent), Child: accessTopic(child)})
	if err != nil {
		return false, err
	}
	lr := linkReq{parent: parent, child: child, delayMs: req.DelayMs}
	if err := s.checkLinkable(lr); err != nil {
		return false, err
	}
	epoch, err := s.newEpoch()
	if err != nil {
		return false, err
	}
	offsets, err := s.attachPoint(ctx, parent)
	if err != nil {
		return false, err
	}
	ev := &meta.AttachChildIf{
		AttachChild: meta.AttachChild{Parent: parent.Name, Child: child.Name, Epoch: epoch, DelayMs: req.DelayMs, Offsets: offsets},
		ParentID:    parent.ID, ChildID: child.ID,
	}
	applied, err := s.store.Propose(ctx, s.envelope(req.Caller.Name, ev))
	if err != nil {
		return false, proposeFailure(err)
	}
	switch res := applied.Result; res.Code {
	case meta.CodeOK:
		return true, nil
	case meta.CodeConflict:
		return false, nil
	case meta.CodeNotFound:
		return false, domain.ErrTopicNotFound
	case meta.CodeRefused, meta.CodeExists:
		return false, s.raceRefusal(lr, res.Detail)
	default:
		return false, fmt.Errorf("topics: attach %q under %q: %w", child.Name, parent.Name, res.Err())
	}
}

// raceRefusal words a link the apply rules refused although this node's
// checks passed: the state moved in between, so the checks run again on
// the fresh state first.
func (s *Service) raceRefusal(lr linkReq, detail string) error {
	parent, perr := s.readTopic(lr.parent.Name)
	child, cerr := s.readTopic(lr.child.Name)
	if perr == nil && cerr == nil {
		if err := s.checkLinkable(linkReq{parent: parent, child: child, delayMs: lr.delayMs}); err != nil {
			return err
		}
	}
	return linkRefusal(detail)
}

// Detach dissolves the link between parent and child (api.md §2.12): the
// child keeps its records and schema history and becomes standalone. A
// missing topic, or two topics that are not linked, answer
// domain.ErrTopicNotFound.
func (s *Service) Detach(ctx context.Context, caller access.Principal, parentName, childName string) error {
	unlock := s.names.lock(childName)
	defer unlock()
	for range casAttempts {
		parent, err := s.readCaughtUp(ctx, parentName)
		if err != nil {
			return err
		}
		child, err := s.readCaughtUp(ctx, childName)
		if err != nil {
			return err
		}
		err = access.Decide(caller, access.Request{Op: access.OpDetach, Parent: accessTopic(parent), Child: accessTopic(child)})
		if err != nil {
			return err
		}
		if child.Parent != parent.Name {
			return domain.ErrTopicNotFound
		}
		ev := &meta.DetachChildIf{DetachChild: meta.DetachChild{Parent: parent.Name, Child: child.Name}, ParentID: parent.ID, ChildID: child.ID}
		applied, err := s.store.Propose(ctx, s.envelope(caller.Name, ev))
		if err != nil {
			return proposeFailure(err)
		}
		switch res := applied.Result; res.Code {
		case meta.CodeOK:
			return nil
		case meta.CodeConflict:
			continue
		case meta.CodeNotFound:
			return domain.ErrTopicNotFound
		default:
			return fmt.Errorf("topics: detach %q from %q: %w", childName, parentName, res.Err())
		}
	}
	return domain.ErrTopicChanged
}
