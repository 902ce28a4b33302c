package consume

import (
	"context"
	"errors"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// forgetRetryDelay paces re-subscribing after the watch lagged or failed.
const forgetRetryDelay = time.Second

// ForgetDeleted keeps the consumer state of deleted incarnations out of the
// way of their successors (story F29): whenever an applied entry deletes a
// topic (or a snapshot restore may have), every shard whose topic is now
// absent, or present under another id, is forgotten with its offsets. Any
// applied entry but a heartbeat also sends the pump round every topic with
// parked consumers (a partition placed here, a limit raised). It runs
// until ctx ends or the store stops (its error).
func (s *Service) ForgetDeleted(ctx context.Context, w ports.MetadataWatcher) error {
	for {
		err := s.watchDeletes(ctx, w)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, meta.ErrStopped):
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(forgetRetryDelay):
		}
	}
}

func (s *Service) watchDeletes(ctx context.Context, w ports.MetadataWatcher) error {
	sub, err := w.Watch(watchBufferCount)
	if err != nil {
		return err
	}
	defer sub.Close()
	s.forgetGone()            // whatever was deleted while nobody watched
	s.pump.lookAtEverything() // and whatever else changed meanwhile
	for {
		select {
		case <-ctx.Done():
			return nil
		case ch, ok := <-sub.C():
			if !ok {
				return sub.Err()
			}
			if ch.Restored || deletesTopic(ch.Envelope.Event) {
				s.forgetGone()
			}
			if ch.Restored || !heartbeat(ch.Envelope.Event) {
				s.pump.lookAtEverything()
			}
		}
	}
}

// heartbeat reports a member's heartbeat, the one entry applied every few
// seconds that changes nothing a parked consumer waits on.
func heartbeat(ev meta.Event) bool {
	_, ok := ev.(*meta.MemberHeartbeat)
	return ok
}

func deletesTopic(ev meta.Event) bool {
	switch ev.(type) {
	case *meta.DeleteTopic, *meta.DeleteTopicIf:
		return true
	}
	return false
}

// forgetGone drops every shard whose incarnation the replica no longer holds.
func (s *Service) forgetGone() {
	gone := map[domain.PartitionRef]bool{}
	for _, sh := range s.shards.all() {
		key := domain.PartitionRef{Topic: sh.ref.Topic, TopicID: sh.ref.TopicID}
		if _, seen := gone[key]; seen {
			continue
		}
		t, ok, err := s.topics.Topic(sh.ref.Topic)
		gone[key] = err == nil && (!ok || domain.TopicID(t.ID) != sh.ref.TopicID)
	}
	for key, isGone := range gone {
		if isGone {
			s.Forget(key.Topic, key.TopicID)
		}
	}
}
