package consume

import (
	"context"
	"errors"
	"fmt"

	"github.com/narad/narad/domain"
)

// leaseGoneMessage opens every 410 message of the consume routes (api.md
// §2.14, §2.15).
const leaseGoneMessage = "receipt handle no longer matches an active reservation"

// Replay reads the record at (partition, offset) with no lease and no
// receipt handle, leaving queue state untouched and counting nothing as
// consumed. Answers (internals.md §4.9): domain.ErrOffsetNegative (400),
// domain.ErrOffsetNotWritten at or past the high watermark (204),
// domain.ErrOffsetGone below the oldest retained offset or in a gap and
// domain.ErrRecordCorrupt (410, each a Refusal with the API's message),
// domain.ErrTopicNotFound, domain.ErrPartitionOutOfRange, domain.ErrNotOwner,
// domain.ErrLogClosed (transient).
func (s *Service) Replay(ctx context.Context, topic string, partition int32, offset int64) (domain.Delivery, error) {
	if err := s.checkOpen(); err != nil {
		return domain.Delivery{}, err
	}
	return s.replay(ctx, Request{Topic: topic, Mode: ModeReplay, Partition: partition, Offset: offset}, s.peers != nil)
}

// replay reads req's record here, or with forward set on its partition's
// owner (internals.md §5.5: self → local, alive remote → forward, dead
// remote → domain.ErrOwnerDown, no answer → domain.ErrOwnerNoAnswer).
func (s *Service) replay(ctx context.Context, req Request, forward bool) (domain.Delivery, error) {
	topic, partition, offset := req.Topic, req.Partition, req.Offset
	if offset < 0 {
		return domain.Delivery{}, domain.ErrOffsetNegative
	}
	t, err := s.topic(topic)
	if err != nil {
		return domain.Delivery{}, err
	}
	sc, owner, err := s.checkPinned(t, scope{pinned: true, partition: partition}, forward)
	switch {
	case err != nil:
		return domain.Delivery{}, err
	case owner != "":
		return s.forwardReplay(ctx, owner, req)
	}
	if !sc.verified {
		return domain.Delivery{}, domain.ErrOffsetNotWritten // unplaced: nothing was committed anywhere
	}
	ref := refOf(t, partition)
	recs, err := s.logs.Read(ctx, ref, offset, 1, 0)
	if err == nil && len(recs) > 0 {
		return domain.Delivery{Topic: t.Name, Partition: partition, Record: recs[0]}, nil
	}
	return domain.Delivery{}, s.replayError(ref, offset, err)
}

// replayError turns a failed read into the API's answer.
func (s *Service) replayError(ref domain.PartitionRef, offset int64, err error) error {
	switch {
	case err == nil:
		return domain.ErrOffsetNotWritten
	case errors.Is(err, domain.ErrOffsetGone):
		if b, berr := s.logs.Bounds(ref); berr == nil && offset < b.Oldest {
			return domain.Refuse(domain.ErrOffsetGone, fmt.Sprintf("%s: offset %d aged out of retention (oldest retained: %d)", leaseGoneMessage, offset, b.Oldest))
		}
		return domain.Refuse(domain.ErrOffsetGone, fmt.Sprintf("%s: offset %d is not readable", leaseGoneMessage, offset))
	case errors.Is(err, domain.ErrRecordCorrupt):
		return domain.Refuse(domain.ErrRecordCorrupt, fmt.Sprintf("%s: offset %d is not readable", leaseGoneMessage, offset))
	case errors.Is(err, domain.ErrOffsetNotWritten), errors.Is(err, domain.ErrLogClosed):
		return err
	}
	return fmt.Errorf("consume: replay %s at %d: %w", ref, offset, err)
}

// forwardReplay reads the record on node, its partition's owner.
func (s *Service) forwardReplay(ctx context.Context, node string, req Request) (domain.Delivery, error) {
	ds, err := s.forwardConsume(ctx, node, remoteRequest(req))
	switch {
	case err != nil:
		return domain.Delivery{}, err
	case len(ds) == 0:
		return domain.Delivery{}, domain.ErrOffsetNotWritten
	}
	d := ds[0]
	d.Handle = nil // a replay carries no lease
	return d, nil
}
