package topics

import (
	"context"
	"errors"
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/deadletter"
	"github.com/narad/narad/domain/meta"
)

// RedriveRequest starts a redrive job on dead-letter topic Name (our
// extension, docs/api-extensions.md "Redrive"). Every field but Name is
// optional: To sends every letter to that topic instead of its origin,
// RatePerSec defaults to deadletter.RedriveRatePerSecDefault (0 is
// unlimited), MaxMessages 0 moves them all.
type RedriveRequest struct {
	Caller      access.Principal
	Name        string
	To          *string
	RatePerSec  *int64
	MaxMessages *int64
}

// job checks r's fields and returns the job it asks for, stamped with id,
// the caller and now.
func (r RedriveRequest) job(id string, nowMs int64) (meta.Redrive, error) {
	j := meta.Redrive{ID: id, RatePerSec: deadletter.RedriveRatePerSecDefault, State: deadletter.RedriveRunning,
		StartedAtMs: nowMs, UpdatedAtMs: nowMs}
	if r.Caller.Secured() {
		j.By = r.Caller.Name
	}
	if r.To != nil {
		if *r.To == "" {
			return j, invalidArg("to must name a topic; leave it out to send each letter to its origin")
		}
		j.To = *r.To
	}
	if r.RatePerSec != nil {
		j.RatePerSec = deadletter.RedriveRatePerSecMax + 1 // out of bounds unless n is within them
		if n := *r.RatePerSec; n >= 0 && n <= deadletter.RedriveRatePerSecMax {
			j.RatePerSec = uint32(n)
		}
	}
	if r.MaxMessages != nil {
		if *r.MaxMessages < 0 {
			return j, invalidArg("max_messages must be 0 (all) or more")
		}
		j.MaxMessages = uint64(*r.MaxMessages)
	}
	if err := j.Validate(r.Name); err != nil {
		return j, invalidArg("%s", deadletter.Rule(err))
	}
	return j, nil
}

// StartRedrive starts a redrive job on r.Name and returns it. The caller
// must own the topic (or be an admin) and, when To is set, hold produce on
// To, which must exist. A job already running is a conflict (409); while a
// member runs a release that cannot store a job, a precondition (412).
func (s *Service) StartRedrive(ctx context.Context, r RedriveRequest) (meta.Redrive, error) {
	id, err := s.randomHex(redriveIDBytes, "redrive id")
	if err != nil {
		return meta.Redrive{}, err
	}
	j, err := r.job(id, s.clock.Now().UnixMilli())
	if err != nil {
		return meta.Redrive{}, err
	}
	if err := s.redriveTargetAllowed(ctx, r.Caller, j.To); err != nil {
		return meta.Redrive{}, err
	}
	if err := s.policyGate(ctx, meta.TypeSetTopicRedrive, "redrive job"); err != nil {
		return meta.Redrive{}, err
	}
	for attempt := 1; ; attempt++ {
		t, err := s.readCaughtUp(ctx, r.Name)
		if err == nil {
			err = mayModify(r.Caller, t)
		}
		if err == nil && t.IsRemoteStub() {
			err = domain.Refuse(domain.ErrConflict, fmt.Sprintf("topic %q is a remote child's stub and takes no redrive", t.Name))
		}
		if err != nil {
			return meta.Redrive{}, err
		}
		err = s.proposePolicy(ctx, r.Caller.Name, t.Name, &meta.SetTopicRedrive{Name: t.Name, ID: t.ID, Redrive: j}, "redrive job")
		if err == nil {
			return j, nil
		}
		if !errors.Is(err, domain.ErrTopicChanged) || attempt >= casAttempts {
			return meta.Redrive{}, err
		}
	}
}

// redriveTargetAllowed refuses a To the caller may not produce to, or that
// names no topic now.
func (s *Service) redriveTargetAllowed(ctx context.Context, caller access.Principal, to string) error {
	if to == "" {
		return nil
	}
	if err := access.Decide(caller, access.Request{Op: access.OpProduce, Topic: access.Topic{Name: to}}); err != nil {
		return err
	}
	_, err := s.readCaughtUp(ctx, to)
	if errors.Is(err, domain.ErrTopicNotFound) {
		return invalidArg("to names no topic: %s", to)
	}
	return err
}

// Redrive returns the last redrive job of topic name, as this replica has
// it; domain.ErrNoRedrive when none was started. Any grant on the topic
// may read it.
func (s *Service) Redrive(caller access.Principal, name string) (meta.Redrive, error) {
	t, err := s.readTopic(name)
	if err == nil {
		err = mayRead(caller, t)
	}
	if err != nil {
		return meta.Redrive{}, err
	}
	if t.Redrive == nil {
		return meta.Redrive{}, domain.ErrNoRedrive
	}
	return *t.Redrive, nil
}

// CancelRedrive ends the running redrive job of topic name and returns it
// as cancelled: what it moved stays moved, the rest stays in the topic.
// The caller must own the topic or be an admin; a topic with no running job
// is a conflict (409).
func (s *Service) CancelRedrive(ctx context.Context, caller access.Principal, name string) (meta.Redrive, error) {
	t, err := s.readCaughtUp(ctx, name)
	if err == nil {
		err = mayModify(caller, t)
	}
	if err != nil {
		return meta.Redrive{}, err
	}
	if t.Redrive == nil || !t.Redrive.Running() {
		return meta.Redrive{}, domain.Refuse(domain.ErrConflict, fmt.Sprintf("topic %q runs no redrive job", name))
	}
	j := *t.Redrive
	j.State = deadletter.RedriveCancelled
	j.UpdatedAtMs = max(j.UpdatedAtMs, s.clock.Now().UnixMilli())
	err = s.proposePolicy(ctx, caller.Name, name, &meta.SetTopicRedrive{Name: name, ID: t.ID, Job: j.ID, Redrive: j}, "redrive job")
	if errors.Is(err, domain.ErrTopicChanged) {
		return meta.Redrive{}, domain.Refuse(domain.ErrConflict, fmt.Sprintf("redrive %s of topic %q ended or the topic changed while it was cancelled; read it again", j.ID, name))
	}
	if err != nil {
		return meta.Redrive{}, err
	}
	return j, nil
}
