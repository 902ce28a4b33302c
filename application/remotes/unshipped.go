package remotes

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Backlogs reads how many records of a topic a member accepted and has
// not yet handed to their owners (its dispatch backlog, op 36 mode
// unshipped for another member).
type Backlogs interface {
	TopicBacklog(ctx context.Context, node, topic string) (ports.TopicBacklog, error)
}

// Unshipped is what is left to ship of a parent (internals.md §7.9).
type Unshipped struct {
	LagMessages     int64
	LagComplete     bool
	DispatchBacklog map[string]uint64
	NotAnswering    []string
	// OverScanLimit names the members whose backlog scan stopped at its
	// bound before the end.
	OverScanLimit []string
}

// clear reports whether nothing is left to ship.
func (u Unshipped) clear() bool {
	if u.LagMessages != 0 || !u.LagComplete || len(u.NotAnswering) > 0 || len(u.OverScanLimit) > 0 {
		return false
	}
	for _, n := range u.DispatchBacklog {
		if n > 0 {
			return false
		}
	}
	return true
}

// UnshippedError is the 409 of a delete that would abandon records.
type UnshippedError struct {
	Child  string
	Report Unshipped
}

func (e *UnshippedError) Error() string {
	return fmt.Sprintf("remote child %q has unshipped records", e.Child)
}

func (e *UnshippedError) Unwrap() error { return domain.ErrConflict }

// unshippedSpacing is the gap between two unshipped checks of a parent.
const unshippedSpacing = 10 * time.Second

// BeforeRemoval guards the removal of topic t (a detach or delete): when
// t is a remote child's stub, or a parent of remote children, nothing of
// the parent may be left to ship (internals.md §7.9) unless force, which
// abandons it and says so in the audit line. It returns nil for a topic
// remote replication has no part in.
func (s *Service) BeforeRemoval(ctx context.Context, p access.Principal, t meta.Topic, force bool) error {
	parent, stubs, err := s.linked(t)
	if err != nil || len(stubs) == 0 {
		return err
	}
	if ok, after := s.unshippedChecks.admit(parent.Name, s.d.Clock.Now()); !ok {
		return domain.RefuseLater(domain.ErrRateLimited, fmt.Sprintf("an unshipped check of %q ran less than 10s ago; retry", parent.Name), after)
	}
	ctx = s.begin(ctx, ports.AuditRemoteChildDelete)
	u := s.unshipped(ctx, parent, stubs)
	if force {
		s.d.Audit.Record(ports.AuditEvent{Event: ports.AuditRemoteChildDelete, Actor: p.Name, Subject: "remote child " + parent.Name + "/" + stubs[0].Name,
			Outcome: ports.AuditOK, Reason: fmt.Sprintf("forced: abandoned_lag_messages=%d abandoned_dispatch_backlog=%d", u.LagMessages, sum(u.DispatchBacklog)),
			RequestID: requestOf(ctx).id})
		return nil
	}
	if !u.clear() {
		err := &UnshippedError{Child: stubs[0].Name, Report: u}
		s.recordChild(ctx, p, parent.Name, stubs[0].Name, err)
		return err
	}
	return nil
}

func sum(m map[string]uint64) uint64 {
	var n uint64
	for _, v := range m {
		n += v
	}
	return n
}

// linked returns the parent and remote children t takes part in.
func (s *Service) linked(t meta.Topic) (meta.Topic, []meta.Topic, error) {
	if t.IsRemoteStub() {
		parent, found, err := s.d.Store.Topic(t.Parent)
		if err != nil || !found {
			return parent, nil, err
		}
		return parent, []meta.Topic{t}, nil
	}
	stubs, err := s.stubsOf(t)
	return t, stubs, err
}

// unshipped reads, in this order, every member's dispatch backlog and then
// every owner's cursor lag of stubs: a record leaves a backlog only once
// committed below the high watermark, so the lag read after it counts it.
func (s *Service) unshipped(ctx context.Context, parent meta.Topic, stubs []meta.Topic) Unshipped {
	u := Unshipped{DispatchBacklog: map[string]uint64{}, LagComplete: true}
	s.readBacklogs(ctx, parent.Name, &u)
	rows, err := s.d.Store.Assignments(parent.Name)
	if err != nil {
		u.LagComplete = false
		return u
	}
	owners := map[int32]string{}
	for _, r := range rows {
		if r.BelongsTo(parent.ID) && r.Owner != "" {
			owners[r.Partition] = r.Owner
		}
	}
	reports := s.askOwners(ctx, parent.Name, owners)
	for _, stub := range stubs {
		for p := range parent.Partitions {
			r, ok := reports[cursorKey{stub.Name, p}]
			switch {
			case owners[p] == "":
				// never placed: nothing was committed to it
			case !ok || r.Lag < 0:
				u.LagComplete = false
			default:
				u.LagMessages += r.Lag
			}
		}
	}
	return u
}

// readBacklogs asks every member for the parent's records in its
// dispatch backlog.
func (s *Service) readBacklogs(ctx context.Context, parent string, u *Unshipped) {
	members, err := s.d.Store.Members()
	if err != nil || s.d.Backlogs == nil {
		u.NotAnswering = append(u.NotAnswering, s.o.Self)
		return
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, m := range members {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, memberCheckTimeout)
			defer cancel()
			b, err := s.d.Backlogs.TopicBacklog(ctx, m.ID, parent)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				u.NotAnswering = append(u.NotAnswering, m.ID)
				return
			}
			u.DispatchBacklog[m.ID] = b.Records
			if !b.Complete {
				u.OverScanLimit = append(u.OverScanLimit, m.ID)
			}
		})
	}
	wg.Wait()
	sort.Strings(u.NotAnswering)
	sort.Strings(u.OverScanLimit)
}

// BeforeRemovalOf is BeforeRemoval of the topic named name, after the
// access rule of a remote child's removal (api.md §2.12: with security on,
// an admin or the parent's owner). A topic that does not exist, or that
// remote replication has no part in, passes: the removal itself answers.
func (s *Service) BeforeRemovalOf(ctx context.Context, p access.Principal, name string, force bool) error {
	t, found, err := s.d.Store.Topic(name)
	if err != nil || !found {
		return err
	}
	parent, stubs, err := s.linked(t)
	if err != nil || len(stubs) == 0 {
		return err
	}
	req := access.Request{Op: access.OpDelete, Topic: access.Topic{Name: t.Name, Owner: t.Owner, RemoteStub: t.IsRemoteStub()},
		Parent: access.Topic{Name: parent.Name, Owner: parent.Owner}}
	if err := access.Decide(p, req); err != nil {
		return err
	}
	if !p.Secured() {
		return domain.Refuse(domain.ErrForbidden, access.MsgRemotesInsecure)
	}
	return s.BeforeRemoval(ctx, p, t, force)
}
