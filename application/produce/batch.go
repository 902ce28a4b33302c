package produce

import (
	"context"
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// Message is one message of a batch produce.
type Message struct {
	Key       []byte
	Partition *int32
	Payload   []byte
	// DelayMs, or DeliverAtMs (unix ms), schedules the message: it is not
	// delivered before then. At most one may be set (CheckSchedule).
	DelayMs     *int64
	DeliverAtMs *int64
}

// MessageError is a batch refused because of one message: the refusal a
// single produce of that message would get, and its zero-based index. The
// client reads "message <index>: <refusal>".
type MessageError struct {
	Index int
	Err   error
}

func (e *MessageError) Error() string { return fmt.Sprintf("message %d: %v", e.Index, e.Err) }
func (e *MessageError) Unwrap() error { return e.Err }

// AcceptBatch accepts msgs into topic all or nothing and returns once every
// record is durable in the ingress WAL, in one append. Checks run in two
// passes over every message: format (payload size, negative pin), then
// schema and partition range; the first failing message decides, as a
// *MessageError. Topic refusals (domain.ErrTopicNotFound,
// domain.ErrDelayedChildProduce) come without an index; an empty or
// oversized batch is a domain.ErrInvalidArgument refusal. Nothing is stored
// on any error but a WAL failure (which may keep a prefix, api.md §2.13.1).
func (s *Service) AcceptBatch(ctx context.Context, topic string, msgs []Message) error {
	if s.draining() {
		return domain.ErrDraining
	}
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	if err := checkBatchFormat(msgs); err != nil {
		return err
	}
	t, sch, err := s.lookup(topic)
	if err != nil {
		return err
	}
	deliverAts, err := s.checkBatchContent(ctx, t, sch, msgs)
	if err != nil {
		return err
	}
	recs := s.batchRecords(t, msgs, deliverAts)
	if _, err := s.wal.AppendMany(ctx, recs); err != nil {
		return fmt.Errorf("produce: append batch of %d to %s: %w", len(recs), t.Name, err)
	}
	return nil
}

// checkBatchFormat is the first pass: the batch's size, then every
// message's format.
func checkBatchFormat(msgs []Message) error {
	switch {
	case len(msgs) == 0:
		return domain.Refuse(domain.ErrInvalidArgument, "messages required")
	case len(msgs) > BatchMaxMessages:
		return domain.Refuse(domain.ErrInvalidArgument,
			fmt.Sprintf("too many messages: %d (max %d)", len(msgs), BatchMaxMessages))
	}
	for i, m := range msgs {
		if err := checkFormat(m); err != nil {
			return &MessageError{Index: i, Err: err}
		}
	}
	return nil
}

// checkBatchContent is the second pass: every message's schema, pinned
// partition and schedule, in message order, so the first failing message
// decides. It returns each message's deliver-at (deliverAt), nil when none
// is scheduled.
func (s *Service) checkBatchContent(ctx context.Context, t meta.Topic, sch *meta.SchemaVersion, msgs []Message) ([]int64, error) {
	nowMs := s.clock.Now().UnixMilli()
	var ats []int64
	for i, m := range msgs {
		if err := s.checkContent(ctx, t, sch, m); err != nil {
			return nil, &MessageError{Index: i, Err: err}
		}
		if !scheduled(m) {
			continue
		}
		at, err := deliverAt(t, m, nowMs)
		if err != nil {
			return nil, &MessageError{Index: i, Err: err}
		}
		if ats == nil {
			ats = make([]int64, len(msgs))
		}
		ats[i] = at
	}
	return ats, nil
}

// batchRecords builds the batch's records: one accept time, one incarnation,
// keyless messages taking consecutive turns of the rotation.
func (s *Service) batchRecords(t meta.Topic, msgs []Message, deliverAts []int64) []domain.IngressRecord {
	now := s.clock.Now()
	keyless := 0
	for _, m := range msgs {
		if rotates(m) {
			keyless++
		}
	}
	var turn uint64
	if keyless > 0 {
		turn = s.rotation.take(t.Name, keyless, now)
	}
	recs := make([]domain.IngressRecord, len(msgs))
	for i, m := range msgs {
		var at int64
		if deliverAts != nil {
			at = deliverAts[i]
		}
		recs[i] = s.record(t, m, now.UnixMilli(), at)
		recs[i].Partition = s.partition(t, m, turn)
		if rotates(m) {
			turn++
		}
	}
	return recs
}
