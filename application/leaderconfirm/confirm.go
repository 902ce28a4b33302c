package leaderconfirm

import (
	"context"
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// Store is what a confirmation needs from the metadata replica.
type Store interface {
	ports.MetadataFreshness
	ports.MetadataTopics
	ports.MetadataCluster
}

// Decision is a confirmation's answer. Only Destroy authorizes destruction;
// the zero value keeps the data.
type Decision struct {
	Destroy bool
	// Reason says why, for the log line every destructive path writes.
	Reason string
	// Err is the failure that made the decision Keep, if any.
	Err error
}

func keep(reason string, err error) Decision { return Decision{Reason: reason, Err: err} }

func destroy(reason string) Decision { return Decision{Destroy: true, Reason: reason} }

// Confirmer confirms destructive decisions against the leader's view. Safe
// for concurrent use.
type Confirmer struct {
	store Store
}

// New returns a Confirmer over store. It panics on a nil store: wiring
// errors fail at construction.
func New(store Store) *Confirmer {
	if store == nil {
		panic("leaderconfirm: nil store")
	}
	return &Confirmer{store: store}
}

// confirm passes a barrier, then lets judge read the views the barrier made
// current. Every failure keeps.
func (c *Confirmer) confirm(ctx context.Context, judge func() (Decision, error)) Decision {
	ctx, cancel := context.WithTimeout(ctx, confirmTimeout)
	defer cancel()
	if err := c.store.Barrier(ctx); err != nil {
		return keep("unconfirmed: barrier failed", fmt.Errorf("leaderconfirm: barrier: %w", err))
	}
	d, err := judge()
	if err != nil {
		return keep("unconfirmed: re-read failed", fmt.Errorf("leaderconfirm: re-read: %w", err))
	}
	return d
}

// TopicGone authorizes destroying data of incarnation id of topic name (a
// directory whose marker names id, a WAL record carrying it) when the
// confirmed view has no topic of that name, or one of another incarnation.
// An empty id asks about the name alone.
func (c *Confirmer) TopicGone(ctx context.Context, name string, id domain.TopicID) Decision {
	return c.confirm(ctx, func() (Decision, error) {
		t, ok, err := c.store.Topic(name)
		switch {
		case err != nil:
			return Decision{}, err
		case !ok:
			return destroy("topic absent"), nil
		case id != "" && t.ID != string(id):
			return destroy("topic is another incarnation"), nil
		}
		return keep("topic present", nil), nil
	})
}

// NotOwner authorizes reclaiming this node's copy of partition ref when the
// confirmed view places it elsewhere: its row names neither self as owner
// nor as move target, or the incarnation is gone. An unplaced partition of a
// live topic keeps (nothing vouches for another copy).
func (c *Confirmer) NotOwner(ctx context.Context, ref domain.PartitionRef, self string) Decision {
	return c.confirm(ctx, func() (Decision, error) {
		t, ok, err := c.store.Topic(ref.Topic)
		if err != nil {
			return Decision{}, err
		}
		if !ok || (ref.TopicID != "" && t.ID != string(ref.TopicID)) {
			return destroy("incarnation gone"), nil
		}
		row, ok, err := c.store.Assignment(ref.Topic, ref.Partition)
		switch {
		case err != nil:
			return Decision{}, err
		case !ok:
			return keep("partition unplaced", nil), nil
		case row.Owner == self:
			return keep("this node owns the partition", nil), nil
		case row.Target == self:
			return keep("the partition is moving to this node", nil), nil
		}
		return destroy("owned by " + row.Owner), nil
	})
}

// LinkGone authorizes removing state of the fan-out link parent → child at
// epoch (a cursor file) when the confirmed view has no such link, or the
// link has another epoch.
func (c *Confirmer) LinkGone(ctx context.Context, parent, child, epoch string) Decision {
	return c.confirm(ctx, func() (Decision, error) {
		live, reason, err := c.linkAt(parent, child, epoch)
		return Decision{Destroy: !live, Reason: reason}, err
	})
}

// LinkLive authorizes anchoring a cursor of the fan-out link parent →
// child at epoch: skipping to its start offset and overwriting its cursor
// file (internals.md §6.3). Destroy is true only when the confirmed view
// has child attached to parent at exactly that epoch.
func (c *Confirmer) LinkLive(ctx context.Context, parent, child, epoch string) Decision {
	return c.confirm(ctx, func() (Decision, error) {
		live, reason, err := c.linkAt(parent, child, epoch)
		return Decision{Destroy: live, Reason: reason}, err
	})
}

// linkAt reads whether the view has child attached to parent at epoch, and
// says why not: the one judgement LinkGone and LinkLive answer opposite ways.
func (c *Confirmer) linkAt(parent, child, epoch string) (live bool, reason string, err error) {
	t, ok, err := c.store.Topic(child)
	switch {
	case err != nil:
		return false, "", err
	case !ok || t.Parent != parent:
		return false, "link dissolved", nil
	case t.AttachEpoch != epoch:
		return false, "link re-attached at another epoch", nil
	}
	return true, "link live at that epoch", nil
}
