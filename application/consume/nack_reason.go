package consume

import (
	"fmt"
	"log/slog"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/deadletter"
	"github.com/narad/narad/domain/meta"
)

// nackWithReason nacks h on sh and keeps nack.Reason durably as its
// offset's last nack reason, where the dead letter made at a later
// delivery reads it (letterOf).
//
// The reason is written after the lease is released, and only when the
// release succeeded, so a dead handle writes nothing; sh.recv.mu is held
// from before the release until the reason is applied. Every delivery of
// the partition is counted under that lock (countReceives) before it is
// handed out or dead-lettered, so a reservation the release makes possible
// waits for the reason and cannot race ahead of it.
//
// A reason that cannot be made durable does not fail the nack: the lease
// is released already, and the message is redelivered as for a nack
// without a reason; a warning is logged.
func (s *Service) nackWithReason(sh *shard, t meta.Topic, h domain.ReceiptHandle, nack NackOptions) error {
	rc := &sh.recv
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err := s.settleOn(sh, t, h, OpNack, nack.Delay); err != nil {
		return err
	}
	if err := s.keepReason(sh, h.Offset, nack.Reason); err != nil {
		s.log.Warn("nack reason not kept; the message was nacked without it",
			slog.String("partition", sh.ref.String()), slog.Int64("offset", h.Offset), slog.String("error", err.Error()))
	}
	return nil
}

// keepReason persists and applies off's last nack reason; call with
// sh.recv.mu held.
func (s *Service) keepReason(sh *shard, off int64, reason string) error {
	if err := s.loadReceives(sh); err != nil {
		return err
	}
	rec := sh.recv.table.Nacked(off, reason)
	if rec.Kind == 0 {
		return nil // the reason it has already
	}
	if err := s.receiveLog.Append(sh.ref, []deadletter.Record{rec}); err != nil {
		return fmt.Errorf("consume: nack reason of %s offset %d: %w", sh.ref, off, err)
	}
	sh.recv.table.Apply(rec)
	return nil
}
