package topics

import (
	"context"
	"fmt"
	"github.com/narad/narad/domain/access"
	"strings"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// CreateRequest is a create as the client sent it (api.md §2.5). Zero
// numbers mean the server default; RetentionMs nil means the default and a
// pointer to 0 keeps records forever.
type CreateRequest struct {
	// Caller is who asks: it needs create on Name (and, with Parent, to
	// manage the parent), and becomes the topic's owner.
	Caller        access.Principal
	Name          string
	Partitions    int64
	RetentionMs   *int64
	VisibilityMs  int64
	MaxInFlight   int64
	MaxAckedAhead int64
	// Schema is the first schema version's document; nil for none.
	Schema        []byte
	Parent        string
	FanoutDelayMs int64
	// Redelivery is the topic's redelivery backoff; nil for none.
	Redelivery *RedeliveryRequest
	// DeadLetter is the topic's dead-letter policy; nil for none.
	DeadLetter *DeadLetterRequest
}

// Created is a create's outcome. Placement failing does not fail the
// create (the topic exists; its partitions stay unassigned until placed):
// PlacementErr says why, for the caller's log.
type Created struct {
	Topic        meta.Topic
	PlacementErr error
}

// Create validates req, proposes the topic with its first schema, then
// places its partitions when this node leads.
func (s *Service) Create(ctx context.Context, req CreateRequest) (Created, error) {
	if err := s.mayCreate(ctx, req); err != nil {
		return Created{}, err
	}
	ev, err := s.createEntry(req)
	if err != nil {
		return Created{}, err
	}
	policy, err := s.createRedelivery(ctx, req)
	if err != nil {
		return Created{}, err
	}
	deadLetter, err := s.createDeadLetter(ctx, req)
	if err != nil {
		return Created{}, err
	}
	if err := s.checkPlaceable(); err != nil {
		return Created{}, err
	}
	unlock := s.names.lock(req.Name)
	defer unlock()
	if req.Parent != "" {
		err = s.proposeChild(ctx, req, ev)
	} else {
		err = s.proposeCreate(ctx, req.Caller.Name, ev)
	}
	if err != nil {
		return Created{}, err
	}
	t, err := s.readTopic(req.Name)
	if err != nil {
		return Created{}, err
	}
	if policy != nil {
		if t, err = s.setCreatedRedelivery(ctx, req, t, policy); err != nil {
			return Created{}, err
		}
	}
	if deadLetter != nil {
		if t, err = s.setCreatedDeadLetter(ctx, req, t, deadLetter); err != nil {
			return Created{}, err
		}
	}
	return Created{Topic: t, PlacementErr: s.placeMissing(ctx, t)}, nil
}

// proposeCreate proposes a standalone topic and maps its refusal.
func (s *Service) proposeCreate(ctx context.Context, actor string, ev *meta.CreateTopicWith) error {
	applied, err := s.store.Propose(ctx, s.envelope(actor, ev))
	if err != nil {
		return proposeFailure(err)
	}
	return s.createRefusal(ev.Name, applied.Result)
}

// createEntry checks every rule of the request and resolves its defaults
// into the entry to propose.
func (s *Service) createEntry(req CreateRequest) (*meta.CreateTopicWith, error) {
	if err := s.checkCreate(req); err != nil {
		return nil, err
	}
	var doc []byte
	if req.Schema != nil {
		var err error
		if doc, err = s.registrable(req.Schema); err != nil {
			return nil, err
		}
	}
	id, err := s.newTopicID()
	if err != nil {
		return nil, err
	}
	d := s.defaults
	c := meta.CreateTopic{
		Name: req.Name, ID: id, Owner: req.Caller.Owner(),
		Partitions:          int32(orDefault(req.Partitions, int64(d.Partitions))), // a child's default is its parent's: proposeChild
		RetentionMs:         d.RetentionMs,
		VisibilityTimeoutMs: orDefault(req.VisibilityMs, d.VisibilityMs),
		MaxInFlight:         orDefault(req.MaxInFlight, d.MaxInFlight),
		MaxAckedAhead:       orDefault(req.MaxAckedAhead, d.MaxAckedAhead),
	}
	if req.RetentionMs != nil {
		c.RetentionMs = *req.RetentionMs
	}
	return &meta.CreateTopicWith{CreateTopic: c, Schema: doc}, nil
}

func orDefault(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}

// checkCreate applies the field rules in the order api.md §2.5 lists them.
func (s *Service) checkCreate(req CreateRequest) error {
	if err := checkNewName(req.Name); err != nil {
		return err
	}
	if err := checkParentFields(req); err != nil {
		return err
	}
	if err := s.checkPartitionCount(req.Partitions); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"visibility_timeout_ms", req.VisibilityMs}, {"max_in_flight_per_partition", req.MaxInFlight}, {"max_acked_ahead_per_partition", req.MaxAckedAhead}} {
		if f.v < 0 {
			return invalidArg("%s must be >= 0 (0 = use default)", f.name)
		}
	}
	if req.RetentionMs != nil {
		return checkRetention(*req.RetentionMs, "invalid argument: ")
	}
	return nil
}

func checkNewName(name string) error {
	switch name {
	case "":
		return invalidArg("name required")
	case ".", "..":
		return invalidArg("topic name must not be %q", name)
	}
	if err := domain.ValidateNewTopicName(name); err != nil {
		msg := strings.TrimSuffix(err.Error(), ": "+domain.ErrInvalidTopicName.Error())
		return domain.Refuse(domain.ErrInvalidTopicName, "invalid argument: "+msg)
	}
	return nil
}

func checkParentFields(req CreateRequest) error {
	switch {
	case req.FanoutDelayMs != 0 && req.Parent == "":
		return invalidArg("fanout_delay_ms requires parent")
	case req.Parent != "" && req.Parent == req.Name:
		return invalidArg("a topic cannot be its own parent")
	case req.FanoutDelayMs < 0:
		return invalidArg("fanout_delay_ms must be >= 0")
	case req.FanoutDelayMs > FanoutDelayMaxMs:
		return invalidArg("fanout_delay_ms (%d) exceeds the maximum of %d (1 year)", req.FanoutDelayMs, FanoutDelayMaxMs)
	}
	return nil
}

// checkPartitionCount checks a create's partitions (0 = default).
func (s *Service) checkPartitionCount(n int64) error {
	switch {
	case n == 0:
		return nil
	case n < PartitionsMinCount:
		return invalidArg("partitions must be >= %d (0 = use default)", PartitionsMinCount)
	case n > int64(s.defaults.MaxPartitions):
		return invalidArg("partitions (%d) exceeds topic.max_partitions (%d)", n, s.defaults.MaxPartitions)
	}
	return nil
}

// checkRetention applies the retention floor (api.md §5.4).
func checkRetention(ms int64, prefix string) error {
	switch {
	case ms < 0:
		return domain.Refuse(domain.ErrInvalidArgument, prefix+"retention_ms must be >= 0 (0 = keep forever)")
	case ms != 0 && ms < RetentionFloorMs:
		return invalidArg("retention_ms (%d) is below the minimum of %d (1 hour)", ms, RetentionFloorMs)
	}
	return nil
}

// checkPlaceable refuses a create no member could take: every alive member
// is draining. No alive member at all is allowed (placed later).
func (s *Service) checkPlaceable() error {
	members, err := s.store.Members()
	if err != nil {
		return readFailure(err)
	}
	alive, draining := 0, 0
	for _, m := range members {
		if m.Status == meta.StatusAlive {
			alive++
			if m.Draining {
				draining++
			}
		}
	}
	if alive > 0 && alive == draining {
		return domain.Refuse(domain.ErrUnavailable, "every live member is being decommissioned, so no member can take new partitions; cancel a decommission or add a node")
	}
	return nil
}

// createRefusal maps a create's applied result.
func (s *Service) createRefusal(name string, res meta.Result) error {
	switch res.Code {
	case meta.CodeOK:
		return nil
	case meta.CodeExists:
		return s.existsRefusal(name)
	case meta.CodeRefused, meta.CodeConflict:
		return domain.Refuse(domain.ErrConflict, res.Detail)
	}
	return fmt.Errorf("topics: create %q: %w", name, res.Err())
}

// existsRefusal tells "taken" from "taken in another letter case", naming
// the existing topic in the latter.
func (s *Service) existsRefusal(name string) error {
	if _, ok, err := s.store.Topic(name); err != nil || ok {
		return domain.ErrTopicExists
	}
	other, err := s.caseTwin(name)
	if err != nil || other == "" {
		return domain.ErrTopicExists
	}
	return domain.Refuse(domain.ErrTopicNameCase,
		fmt.Sprintf("topic %q differs only in letter case from existing topic %q", name, other))
}

// caseTwin finds the topic whose name equals name but for letter case.
func (s *Service) caseTwin(name string) (string, error) {
	all, err := s.store.ListTopics("", 0)
	if err != nil {
		return "", err
	}
	for _, t := range all {
		if domain.NamesCollide(t.Name, name) {
			return t.Name, nil
		}
	}
	return "", nil
}

func invalidArg(format string, args ...any) error {
	return domain.Refuse(domain.ErrInvalidArgument, "invalid argument: "+fmt.Sprintf(format, args...))
}
