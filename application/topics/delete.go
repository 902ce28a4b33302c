package topics

import (
	"context"
	"errors"
	"fmt"
	"github.com/narad/narad/domain/access"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// Deleted is a delete's outcome. The metadata removal is the commit point;
// PurgeErr says why this node's data of the deleted incarnation could not be
// purged now (the sweeps and the open-time incarnation check backstop it).
type Deleted struct {
	Topic    meta.Topic // the incarnation deleted
	PurgeErr error
}

// Delete removes topic name's incarnation as read (retrying once if it was
// recreated under the request), then purges this node's partitions of that
// incarnation once the leader confirms it is gone.
func (s *Service) Delete(ctx context.Context, caller access.Principal, name string) (Deleted, error) {
	unlock := s.names.lock(name)
	defer unlock()
	for attempt := 1; attempt <= casAttempts; attempt++ {
		t, err := s.readCaughtUp(ctx, name)
		if err == nil {
			err = s.mayDelete(caller, t)
		}
		if err != nil {
			return Deleted{}, err
		}
		var ev meta.Event = &meta.DeleteTopicIf{Name: name, ID: t.ID}
		if t.ID == "" {
			ev = &meta.DeleteTopic{Name: name}
		}
		applied, err := s.store.Propose(ctx, s.envelope(caller.Name, ev))
		if err != nil {
			return Deleted{}, proposeFailure(err)
		}
		switch res := applied.Result; res.Code {
		case meta.CodeOK:
			return Deleted{Topic: t, PurgeErr: s.purge(ctx, t)}, nil
		case meta.CodeNotFound:
			return Deleted{}, domain.ErrTopicNotFound
		case meta.CodeConflict:
			continue
		default:
			return Deleted{}, fmt.Errorf("topics: delete %q: %w", name, res.Err())
		}
	}
	return Deleted{}, domain.ErrTopicChanged
}

// purge removes this node's partition data of incarnation t (internals.md
// §8.6, "purge after delete"): only after the leader confirms that
// incarnation is gone, and only data stamped with its id (the log store
// leaves another incarnation's directory alone). On doubt it keeps.
func (s *Service) purge(ctx context.Context, t meta.Topic) error {
	id := domain.TopicID(t.ID)
	if d := s.confirm.TopicGone(ctx, t.Name, id); !d.Destroy {
		if d.Err != nil {
			return fmt.Errorf("topics: purge %q kept its data (%s): %w", t.Name, d.Reason, d.Err)
		}
		return fmt.Errorf("topics: purge %q kept its data: %s", t.Name, d.Reason)
	}
	var errs []error
	for p := int32(0); p < t.Partitions; p++ {
		ref := domain.PartitionRef{Topic: t.Name, TopicID: id, Partition: p}
		if err := s.logs.Remove(ref); err != nil {
			errs = append(errs, fmt.Errorf("topics: purge %s: %w", ref, err))
		}
	}
	return errors.Join(errs...)
}
