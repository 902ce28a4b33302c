package remotes

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// AttachRequest creates a remote child (api.md §2.10.2).
type AttachRequest struct {
	Parent      string
	Child       string
	Remote      string
	RemoteTopic string // "" = the parent's name
	From        string // "" = attach
	Lanes       int32  // 0 = 1
	DelayMs     int64
	DryRun      bool
}

// AttachResult is a remote child's create: the stub, or for a dry run the
// offsets the link would start from; with the checks and warnings.
type AttachResult struct {
	DryRun      bool
	Offsets     []int64
	Checks      []Report
	Warnings    []string
	Capable1000 bool
	// Capabilities is what a dry run learned of the target; nil otherwise.
	Capabilities *Capabilities
	Stub         meta.Topic
}

// CheckError is a refusal by the target checks: the failing class (a link
// state or a check class, whose status api.md §5.8 gives) and every
// member's report.
type CheckError struct {
	Class  string
	Checks []Report
}

func (e *CheckError) Error() string {
	return fmt.Sprintf("the target checks failed: %s", e.Class)
}

// retentionWarnMs is the parent retention below which an attach warns
// (internals.md §7.1: 72 hours).
const retentionWarnMs = 72 * 3600 * 1000

// AttachChild creates a remote child: the fields and the parent are
// checked, the target checks run, the start offsets are resolved from the
// partitions' owners, and one entry is proposed (nothing for a dry run).
func (s *Service) AttachChild(ctx context.Context, p access.Principal, req AttachRequest) (AttachResult, error) {
	ctx = s.begin(ctx, ports.AuditRemoteChildCreate)
	out, err := s.attachChild(ctx, p, req)
	s.recordChild(ctx, p, req.Parent, req.Child, err)
	return out, err
}

func (s *Service) attachChild(ctx context.Context, p access.Principal, req AttachRequest) (AttachResult, error) {
	if err := authorize(p); err != nil {
		return AttachResult{}, err
	}
	req, err := normalizeAttach(req)
	if err != nil {
		return AttachResult{}, err
	}
	r, parent, err := s.attachTargets(req)
	if err != nil {
		return AttachResult{}, err
	}
	if err := s.gates(ctx, meta.TypeAttachRemoteChild, true); err != nil {
		return AttachResult{}, err
	}
	if err := s.admitChildWrite(); err != nil {
		return AttachResult{}, err
	}
	reports, err := s.runChecks(ctx, r, req.RemoteTopic, &parent)
	if err != nil {
		return AttachResult{}, err
	}
	rep := reports[0]
	out := AttachResult{DryRun: req.DryRun, Checks: reports, Warnings: []string{}, Capable1000: rep.Capable1000}
	out.Capabilities = s.dryRunCapabilities(ctx, req, r, reports)
	if parent.RetentionMs != 0 && parent.RetentionMs < retentionWarnMs {
		out.Warnings = append(out.Warnings, "parent retention is below 72 hours")
	}
	if out.Offsets, err = s.startOffsets(ctx, parent, req.From); err != nil || req.DryRun {
		return out, err
	}
	ev, err := s.attachEvent(req, parent, r, rep.TargetID, out.Offsets)
	if err != nil {
		return out, err
	}
	if out.Stub, err = s.proposeChild(ctx, p, ev, req.Child); err != nil {
		return out, err
	}
	return out, nil
}

// normalizeAttach checks the request's fields and fills the defaults.
func normalizeAttach(req AttachRequest) (AttachRequest, error) {
	if req.RemoteTopic == "" {
		req.RemoteTopic = req.Parent
	}
	if req.From == "" {
		req.From = meta.RemoteFromAttach
	}
	if req.Lanes == 0 {
		req.Lanes = 1
	}
	switch {
	case domain.ValidateTopicName(req.Child) != nil:
		return req, invalidField("child must be a topic name")
	case domain.ValidateTopicName(req.RemoteTopic) != nil:
		return req, invalidField("remote_topic must be a topic name")
	case req.Lanes < 1 || req.Lanes > meta.RemoteLanesMax:
		return req, invalidField("lanes must be 1 to %d", meta.RemoteLanesMax)
	case req.From != meta.RemoteFromAttach && req.From != meta.RemoteFromUnconsumed && req.From != meta.RemoteFromEarliest:
		return req, invalidField("from must be attach, unconsumed or earliest")
	case req.DelayMs < 0:
		return req, invalidField("delay_ms must be >= 0")
	}
	return req, nil
}

// attachTargets reads the remote (400 when not registered), the parent
// (404) and checks that the child's name is free (409) and the parent's
// retention gives the link time to recover (409).
func (s *Service) attachTargets(req AttachRequest) (meta.Remote, meta.Topic, error) {
	r, err := s.readRemote(req.Remote)
	if err != nil {
		return r, meta.Topic{}, invalidField("remote %q is not registered", req.Remote)
	}
	parent, found, err := s.d.Store.Topic(req.Parent)
	switch {
	case err != nil:
		return r, parent, readFailure(err)
	case !found:
		return r, parent, domain.Refuse(domain.ErrTopicNotFound, "topic not found")
	}
	if _, exists, err := s.d.Store.Topic(req.Child); err != nil || exists {
		if err != nil {
			return r, parent, readFailure(err)
		}
		return r, parent, domain.Refuse(domain.ErrTopicExists, "topic already exists")
	}
	if parent.RetentionMs != 0 && parent.RetentionMs < meta.RemoteParentRetentionMinMs {
		return r, parent, domain.Refuse(domain.ErrConflict, fmt.Sprintf(
			"parent %q keeps records %d ms; a parent of remote children keeps them at least 24 hours (or forever)", parent.Name, parent.RetentionMs))
	}
	return r, parent, nil
}

// admitChildWrite charges one remote-child write to this node's minute.
func (s *Service) admitChildWrite() error {
	if ok, after := s.childW.admit(s.d.Clock.Now()); !ok {
		return domain.RefuseLater(domain.ErrRateLimited, msgChildWrites, after)
	}
	return nil
}

// runChecks runs the target checks of r from the members (checkMembers),
// one check of a remote per 5 s on this node; a failure is a *CheckError.
// The reports start with this node's.
func (s *Service) runChecks(ctx context.Context, r meta.Remote, topic string, source *meta.Topic) ([]Report, error) {
	if ok, after := s.checks.admit(r.Name, s.d.Clock.Now()); !ok {
		return nil, domain.RefuseLater(domain.ErrRateLimited, msgCheckBusy, after)
	}
	reports := s.checkMembers(ctx, r, topic, source)
	if class := foldReports(r, reports); class != "" {
		return reports, &CheckError{Class: class, Checks: reports}
	}
	return reports, nil
}

// attachEvent builds the entry of a remote child's create with fresh ids.
func (s *Service) attachEvent(req AttachRequest, parent meta.Topic, r meta.Remote, targetID string, offsets []int64) (*meta.AttachRemoteChild, error) {
	childID, err := s.randomHex()
	if err != nil {
		return nil, err
	}
	epoch, err := s.randomHex()
	if err != nil {
		return nil, err
	}
	return &meta.AttachRemoteChild{Parent: parent.Name, ParentID: parent.ID, Child: req.Child, ChildID: childID, Epoch: epoch,
		DelayMs: req.DelayMs, Offsets: offsets, Remote: r.Name, RemoteID: r.ID, RemoteTopic: req.RemoteTopic,
		TargetID: targetID, From: req.From, Lanes: req.Lanes}, nil
}

// randomHex draws 16 lowercase hex characters.
func (s *Service) randomHex() (string, error) {
	var b [idBytes]byte
	if _, err := io.ReadFull(s.d.Random, b[:]); err != nil {
		return "", fmt.Errorf("remotes: draw an id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// proposeChild proposes a remote-child entry and reads the stub back.
func (s *Service) proposeChild(ctx context.Context, p access.Principal, ev meta.Event, child string) (meta.Topic, error) {
	res, err := s.propose(ctx, p, ev)
	if err != nil {
		return meta.Topic{}, err
	}
	if !res.OK() {
		return meta.Topic{}, childRefusal(res)
	}
	stub, found, err := s.d.Store.Topic(child)
	switch {
	case err != nil:
		return stub, readFailure(err)
	case !found:
		return stub, domain.Refuse(domain.ErrUnavailable, "committed but not yet visible on this node; read it back")
	}
	return stub, nil
}

// childRefusal maps an apply refusal of a remote-child entry.
func childRefusal(res meta.Result) error {
	switch res.Code {
	case meta.CodeNotFound:
		return domain.Refuse(domain.ErrTopicNotFound, "topic not found")
	case meta.CodeExists:
		return domain.Refuse(domain.ErrTopicExists, res.Detail)
	case meta.CodeConflict, meta.CodeRefused:
		return domain.Refuse(domain.ErrConflict, res.Detail)
	case meta.CodeInvalid:
		return domain.Refuse(domain.ErrInvalidArgument, res.Detail)
	}
	return fmt.Errorf("remotes: unexpected apply result: %w", res.Err())
}
