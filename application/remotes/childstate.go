package remotes

import (
	"context"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Blocked is where one remote child cursor is stuck: the offset and the
// state (rejected_record or record_too_large); Offset -1 when it is not.
type Blocked struct {
	Offset int64
	State  string
}

// Stuck asks the node running a remote child's cursor where it is
// blocked (this node's shipper, or the node over RPC).
type Stuck interface {
	BlockedAt(ctx context.Context, node, parent string, partition int32, child string) (Blocked, error)
}

// SkipError is the 409 of a skip whose cursor is not stuck on exactly that
// record; At says where it is (nil when not stuck).
type SkipError struct {
	Partition int32
	At        *Blocked
}

func (e *SkipError) Error() string {
	return fmt.Sprintf("the link of partition %d is not stuck on that record", e.Partition)
}

func (e *SkipError) Unwrap() error { return domain.ErrConflict }

// pauseReasonMaxBytes bounds a pause reason (api.md §2.12.1).
const pauseReasonMaxBytes = 256

// Pause stops a remote child sending; a second pause replaces the reason.
func (s *Service) Pause(ctx context.Context, p access.Principal, parent, child, reason string) (meta.Topic, error) {
	ctx = s.begin(ctx, ports.AuditRemoteChildPause)
	stub, err := s.pause(ctx, p, parent, child, reason)
	s.recordChild(ctx, p, parent, child, err)
	return stub, err
}

func (s *Service) pause(ctx context.Context, p access.Principal, parent, child, reason string) (meta.Topic, error) {
	if err := authorize(p); err != nil {
		return meta.Topic{}, err
	}
	if len(reason) > pauseReasonMaxBytes || !printable(reason) {
		return meta.Topic{}, invalidField("reason must be at most %d bytes of printable text", pauseReasonMaxBytes)
	}
	stub, err := s.readStub(parent, child)
	if err != nil {
		return stub, err
	}
	if err := s.gates(ctx, meta.TypeSetRemoteChildState, false); err != nil {
		return stub, err
	}
	if err := s.admitChildWrite(); err != nil {
		return stub, err
	}
	return s.proposeChild(ctx, p, &meta.SetRemoteChildState{Parent: parent, Child: child, ChildID: stub.ID, Op: meta.RemoteOpPause, Reason: reason}, child)
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// readStub reads child, a remote child of parent: 404 otherwise.
func (s *Service) readStub(parent, child string) (meta.Topic, error) {
	if domain.ValidateTopicName(parent) != nil || domain.ValidateTopicName(child) != nil {
		return meta.Topic{}, invalidField("parent and child must be topic names")
	}
	stub, found, err := s.d.Store.Topic(child)
	switch {
	case err != nil:
		return stub, readFailure(err)
	case !found || !stub.IsRemoteStub() || stub.Parent != parent:
		return stub, domain.Refuse(domain.ErrTopicNotFound, fmt.Sprintf("%q has no remote child %q", parent, child))
	}
	return stub, nil
}

// Resume re-runs the target checks and lets the link send. A target
// recreated since the attach (another id) is refused as target_replaced
// unless acceptTarget, which records the new id.
func (s *Service) Resume(ctx context.Context, p access.Principal, parent, child string, acceptTarget bool) (meta.Topic, error) {
	event := ports.AuditRemoteChildResume
	if acceptTarget {
		event = ports.AuditRemoteChildAccept
	}
	ctx = s.begin(ctx, event)
	stub, err := s.resume(ctx, p, parent, child, acceptTarget)
	s.recordChild(ctx, p, parent, child, err)
	return stub, err
}

func (s *Service) resume(ctx context.Context, p access.Principal, parent, child string, acceptTarget bool) (meta.Topic, error) {
	if err := authorize(p); err != nil {
		return meta.Topic{}, err
	}
	stub, err := s.readStub(parent, child)
	if err != nil {
		return stub, err
	}
	link := stub.Remote
	r, err := s.readRemote(link.Name)
	if err != nil || r.ID != link.RemoteID {
		return stub, &CheckError{Class: "remote_missing"}
	}
	src, found, err := s.d.Store.Topic(parent)
	if err != nil || !found {
		return stub, domain.Refuse(domain.ErrTopicNotFound, "topic not found")
	}
	if err := s.gates(ctx, meta.TypeSetRemoteChildState, true); err != nil {
		return stub, err
	}
	if err := s.admitChildWrite(); err != nil {
		return stub, err
	}
	reports, err := s.runChecks(ctx, r, link.Topic, &src)
	if err != nil {
		return stub, err
	}
	rep := reports[0]
	ev := &meta.SetRemoteChildState{Parent: parent, Child: child, ChildID: stub.ID, Op: meta.RemoteOpResume}
	if rep.TargetID != link.TargetID {
		if !acceptTarget {
			return stub, &CheckError{Class: "target_replaced", Checks: reports}
		}
		ev.Op, ev.TargetID = meta.RemoteOpAcceptTarget, rep.TargetID
	}
	return s.proposeChild(ctx, p, ev, child)
}

// Skip lets a remote child drop the one parent record its cursor on
// partition is stuck on; only while the cursor is stuck on exactly that
// offset in rejected_record or record_too_large (api.md §2.12.1).
func (s *Service) Skip(ctx context.Context, p access.Principal, parent, child string, partition int32, offset int64) (meta.Topic, error) {
	ctx = s.begin(ctx, ports.AuditRemoteChildSkip)
	stub, err := s.skip(ctx, p, parent, child, partition, offset)
	s.recordChild(ctx, p, parent, child, err)
	return stub, err
}

func (s *Service) skip(ctx context.Context, p access.Principal, parent, child string, partition int32, offset int64) (meta.Topic, error) {
	if err := authorize(p); err != nil {
		return meta.Topic{}, err
	}
	if partition < 0 || offset < 0 {
		return meta.Topic{}, invalidField("partition and offset must be >= 0")
	}
	stub, err := s.readStub(parent, child)
	if err != nil {
		return stub, err
	}
	at, err := s.blockedAt(ctx, parent, partition, child)
	if err != nil {
		return stub, err
	}
	if at == nil || at.Offset != offset {
		return stub, &SkipError{Partition: partition, At: at}
	}
	if err := s.gates(ctx, meta.TypeSetRemoteChildState, false); err != nil {
		return stub, err
	}
	if err := s.admitChildWrite(); err != nil {
		return stub, err
	}
	return s.proposeChild(ctx, p, &meta.SetRemoteChildState{Parent: parent, Child: child, ChildID: stub.ID,
		Op: meta.RemoteOpSkip, Partition: partition, Offset: offset}, child)
}

// blockedAt asks the owner of the parent partition where its cursor is
// stuck; nil when it is not stuck on a record.
func (s *Service) blockedAt(ctx context.Context, parent string, partition int32, child string) (*Blocked, error) {
	row, found, err := s.d.Store.Assignment(parent, partition)
	switch {
	case err != nil:
		return nil, readFailure(err)
	case !found || row.Owner == "":
		return nil, nil
	case s.d.Stuck == nil:
		return nil, domain.Refuse(domain.ErrUnavailable, "this node cannot ask where the link is stuck")
	}
	ctx, cancel := context.WithTimeout(ctx, memberCheckTimeout)
	defer cancel()
	b, err := s.d.Stuck.BlockedAt(ctx, row.Owner, parent, partition, child)
	if err != nil {
		return nil, domain.Refuse(domain.ErrUnavailable, fmt.Sprintf("node %s, which runs the link of partition %d, did not answer: %v", row.Owner, partition, err))
	}
	if b.Offset < 0 || (b.State != "rejected_record" && b.State != "record_too_large") {
		return nil, nil
	}
	return &b, nil
}
