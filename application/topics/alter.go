package topics

import (
	"context"
	"fmt"
	"github.com/narad/narad/domain/access"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// AlterRequest is a PATCH as the client sent it (api.md §2.8): nil fields
// are left alone. Schema is the raw document (nil when absent).
type AlterRequest struct {
	// Caller is who asks: the topic's owner or an admin.
	Caller            access.Principal
	Name              string
	RetentionMs       *int64
	MaxInFlight       *int64
	MaxAckedAhead     *int64
	Partitions        *int64
	Schema            []byte
	SchemaBaseVersion *int64
	// Redelivery sets the redelivery backoff; ClearRedelivery removes it.
	Redelivery      *RedeliveryRequest
	ClearRedelivery bool
	// DeadLetter sets the dead-letter policy; ClearDeadLetter removes it.
	DeadLetter      *DeadLetterRequest
	ClearDeadLetter bool
}

// Altered is an alter's outcome; PlacementErr is why new partitions could
// not be placed yet (the alter itself succeeded).
type Altered struct {
	Topic        meta.Topic
	PlacementErr error
}

// Alter applies the request's groups in the order retention → caps →
// partitions → redelivery → dead letter → schema. It is not atomic: when a
// later group fails, earlier groups stay applied and the error is returned.
func (s *Service) Alter(ctx context.Context, req AlterRequest) (Altered, error) {
	if err := checkAlterRequest(req); err != nil {
		return Altered{}, err
	}
	policy, err := s.alterRedelivery(ctx, req)
	if err != nil {
		return Altered{}, err
	}
	deadLetter, err := s.alterDeadLetter(ctx, req)
	if err != nil {
		return Altered{}, err
	}
	unlock := s.names.lock(req.Name)
	defer unlock()
	before, err := s.readCaughtUp(ctx, req.Name)
	if err != nil {
		return Altered{}, err
	}
	if err := mayModify(req.Caller, before); err != nil {
		return Altered{}, err
	}
	if before.IsRemoteStub() {
		return Altered{}, domain.Refuse(domain.ErrConflict,
			fmt.Sprintf("remote child %q lives on remote %s; alter it there", before.Name, before.Remote.Name))
	}
	var out Altered
	if req.RetentionMs != nil || req.MaxInFlight != nil || req.MaxAckedAhead != nil || req.Partitions != nil {
		t, err := s.alterConfig(ctx, req)
		if err != nil {
			return Altered{}, err
		}
		if t.Partitions > before.Partitions {
			out.PlacementErr = s.placeMissing(ctx, t)
		}
	}
	if req.Redelivery != nil || req.ClearRedelivery {
		if err := s.applyRedelivery(ctx, req, policy); err != nil {
			return Altered{}, err
		}
	}
	if req.DeadLetter != nil || req.ClearDeadLetter {
		if err := s.applyDeadLetter(ctx, req, deadLetter); err != nil {
			return Altered{}, err
		}
	}
	if req.Schema != nil {
		if err := s.alterSchema(ctx, req); err != nil {
			return Altered{}, err
		}
	}
	out.Topic, err = s.readTopic(req.Name)
	return out, err
}

// checkAlterRequest refuses what no topic state could make valid.
func checkAlterRequest(req AlterRequest) error {
	refuse := func(msg string) error { return domain.Refuse(domain.ErrInvalidArgument, msg) }
	switch {
	case req.RetentionMs == nil && req.MaxInFlight == nil && req.MaxAckedAhead == nil && req.Partitions == nil && req.Schema == nil &&
		req.Redelivery == nil && !req.ClearRedelivery && req.DeadLetter == nil && !req.ClearDeadLetter:
		return refuse("at least one of partitions, retention_ms, max_*_per_partition, or schema is required")
	case req.Redelivery != nil && req.ClearRedelivery:
		return refuse("redelivery: set a policy or clear it (null), not both")
	case req.DeadLetter != nil && req.ClearDeadLetter:
		return refuse("dead_letter: set a policy or clear it (null), not both")
	case req.Partitions != nil && *req.Partitions <= 0:
		return refuse("partitions must be > 0")
	case req.RetentionMs != nil && *req.RetentionMs < 0:
		return refuse("retention_ms must be >= 0 (0 = keep forever)")
	case req.MaxInFlight != nil && *req.MaxInFlight < 0:
		return refuse("max_in_flight_per_partition must be >= 0 (0 = use default)")
	case req.MaxAckedAhead != nil && *req.MaxAckedAhead < 0:
		return refuse("max_acked_ahead_per_partition must be >= 0 (0 = use default)")
	case req.Schema != nil && string(req.Schema) == "null":
		return refuse("invalid argument: schema: null is not a schema (a schema can never be removed)")
	}
	return nil
}

// alterConfig applies the retention, caps and partitions groups as one
// compare-and-set on the incarnation read, retrying once after a lost race.
// A group that fails its rules stops there: the groups before it are still
// applied, then its error returned.
func (s *Service) alterConfig(ctx context.Context, req AlterRequest) (meta.Topic, error) {
	for attempt := 1; ; attempt++ {
		t, err := s.readTopic(req.Name)
		if err == nil {
			err = mayModify(req.Caller, t) // a recreated incarnation is judged again
		}
		if err != nil {
			return meta.Topic{}, err
		}
		u, groupErr := s.configUpdate(t, req)
		if u == nil {
			return t, groupErr
		}
		res, err := s.proposeUpdate(ctx, req.Caller.Name, t, *u)
		if err != nil {
			return meta.Topic{}, err
		}
		switch res.Code {
		case meta.CodeOK:
			t, err := s.readTopic(req.Name)
			if err != nil {
				return meta.Topic{}, err
			}
			return t, groupErr
		case meta.CodeNotFound:
			return meta.Topic{}, domain.ErrTopicNotFound
		case meta.CodeRefused:
			return meta.Topic{}, domain.Refuse(domain.ErrConflict, "delay exceeds what the parent's retention can buffer: "+res.Detail)
		case meta.CodeConflict:
			if attempt < casAttempts {
				continue
			}
			return meta.Topic{}, domain.ErrTopicChanged
		}
		return meta.Topic{}, fmt.Errorf("topics: alter %q: %w", req.Name, res.Err())
	}
}

// configUpdate builds the update of the valid groups, in order, from t's
// current values. It returns nil when no group changes anything, and the
// error of the first group that fails its rules.
func (s *Service) configUpdate(t meta.Topic, req AlterRequest) (*meta.UpdateTopic, error) {
	u := meta.UpdateTopic{Name: t.Name, Partitions: t.Partitions, RetentionMs: t.RetentionMs,
		MaxInFlight: t.MaxInFlight, MaxAckedAhead: t.MaxAckedAhead}
	applied := false
	if req.RetentionMs != nil {
		if err := checkRetention(*req.RetentionMs, ""); err != nil {
			return nil, err
		}
		u.RetentionMs, applied = *req.RetentionMs, true
	}
	if req.MaxInFlight != nil {
		u.MaxInFlight, applied = orDefault(*req.MaxInFlight, s.defaults.MaxInFlight), true
	}
	if req.MaxAckedAhead != nil {
		u.MaxAckedAhead, applied = orDefault(*req.MaxAckedAhead, s.defaults.MaxAckedAhead), true
	}
	if req.Partitions != nil {
		if err := s.checkGrowth(t, *req.Partitions); err != nil {
			return updateIf(applied, u), err
		}
		u.Partitions, applied = int32(*req.Partitions), true
	}
	return updateIf(applied, u), nil
}

func updateIf(applied bool, u meta.UpdateTopic) *meta.UpdateTopic {
	if !applied {
		return nil
	}
	return &u
}

// checkGrowth allows only a larger count within topic.max_partitions.
func (s *Service) checkGrowth(t meta.Topic, n int64) error {
	switch {
	case n <= int64(t.Partitions):
		return invalidArg("new partition count (%d) must be greater than current (%d); decrease is not supported", n, t.Partitions)
	case n > int64(s.defaults.MaxPartitions):
		return invalidArg("partitions (%d) exceeds topic.max_partitions (%d)", n, s.defaults.MaxPartitions)
	}
	return nil
}

// proposeUpdate proposes u on incarnation t.ID (the legacy unconditional
// entry for a topic older than incarnation ids).
func (s *Service) proposeUpdate(ctx context.Context, actor string, t meta.Topic, u meta.UpdateTopic) (meta.Result, error) {
	var ev meta.Event = &meta.UpdateTopicIf{UpdateTopic: u, ID: t.ID}
	if t.ID == "" {
		ev = &u
	}
	applied, err := s.store.Propose(ctx, s.envelope(actor, ev))
	if err != nil {
		return meta.Result{}, proposeFailure(err)
	}
	return applied.Result, nil
}
