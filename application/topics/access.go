package topics

import (
	"context"

	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
)

// accessTopic is what the access rule needs of t.
func accessTopic(t meta.Topic) access.Topic {
	return access.Topic{Name: t.Name, Owner: t.Owner, RemoteStub: t.IsRemoteStub()}
}

// mayModify asks the access rule whether p may alter t or name it as a new
// child's parent: its owner or an admin (api.md §4.4).
func mayModify(p access.Principal, t meta.Topic) error {
	return access.Decide(p, access.Request{Op: access.OpModify, Topic: accessTopic(t)})
}

// mayRead asks whether p may read t: any grant on its name, ownership or
// admin.
func mayRead(p access.Principal, t meta.Topic) error {
	return access.Decide(p, access.Request{Op: access.OpRead, Topic: accessTopic(t)})
}

// mayDelete asks whether p may delete t; a remote child's stub is judged by
// its parent's owner (parent is read only for a stub).
func (s *Service) mayDelete(p access.Principal, t meta.Topic) error {
	req := access.Request{Op: access.OpDelete, Topic: accessTopic(t)}
	if t.IsRemoteStub() && t.Parent != "" {
		parent, ok, err := s.store.Topic(t.Parent)
		if err != nil {
			return readFailure(err)
		}
		if ok {
			req.Parent = accessTopic(parent)
		}
	}
	return access.Decide(p, req)
}

// mayCreate asks whether req.Caller may create req.Name, and manage its
// parent for a create as child, before any field rule (api.md §2.5 lists
// both 403s first). A parent that cannot be read here is judged later, on
// the incarnation the create links to.
func (s *Service) mayCreate(ctx context.Context, req CreateRequest) error {
	if err := access.Decide(req.Caller, access.Request{Op: access.OpCreate, Topic: access.Topic{Name: req.Name}}); err != nil {
		return err
	}
	if req.Parent == "" || req.Caller.Admin() {
		return nil
	}
	parent, err := s.readCaughtUp(ctx, req.Parent)
	if err != nil {
		return nil // the create reads the parent again and answers its error there
	}
	return mayModify(req.Caller, parent)
}
