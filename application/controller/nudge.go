package controller

import (
	"context"
	"errors"
	"fmt"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// A topic created or grown through a follower is proposed through Raft
// forwarding, so the node that took the request cannot place it (placement
// is the leader's). The leader watches applied entries instead and places
// such a topic's partitions at once, not on its next 10 s pass: a client
// that creates a topic on any node finds it placed within a round trip or
// two, as it would had the create reached the leader.

// placementWanted names the topic whose partitions an applied entry may have
// left unplaced: a create, a partition increase, a fan-out attach (the
// child), or a parent placement a deferred child waits for. ok is false for
// every other entry.
func placementWanted(ev meta.Event) (topic string, ok bool) {
	switch e := ev.(type) {
	case *meta.CreateTopic:
		return e.Name, true
	case *meta.CreateTopicWith:
		return e.Name, true
	case *meta.UpdateTopic:
		return e.Name, true
	case *meta.UpdateTopicIf:
		return e.Name, true
	case *meta.AttachChild:
		return e.Child, true
	case *meta.AttachChildIf:
		return e.Child, true
	}
	return "", false
}

// PlaceChanged places the unowned partitions of the topics named by changes
// (see placementWanted) when this node leads, behind a barrier. A leader
// whose term has not started yet (just elected, its promotion not noticed)
// runs the term's first pass instead, which sweeps every topic. It returns
// ErrNotLeader when this node does not lead.
func (c *Controller) PlaceChanged(ctx context.Context, changes []ports.MetaChange) error {
	names := map[string]bool{}
	for _, ch := range changes {
		if name, ok := placementWanted(ch.Envelope.Event); ok && ch.Result.Code == meta.CodeOK {
			names[name] = true
		}
	}
	if len(names) == 0 {
		return nil
	}
	if !c.store.IsLeader() {
		return ErrNotLeader
	}
	if c.term == nil {
		return c.Tick(ctx)
	}
	if err := c.confirmLeader(ctx); err != nil {
		return err
	}
	return c.placeNamed(ctx, names)
}

// placeNamed places the named topics' unowned partitions, and those of any
// child of theirs (a child placed before its parent was deferred).
func (c *Controller) placeNamed(ctx context.Context, names map[string]bool) error {
	c.place.Lock()
	defer c.place.Unlock()
	candidates, err := c.candidates()
	if err != nil || len(candidates) == 0 {
		return err
	}
	for name := range names {
		t, ok, err := c.store.Topic(name)
		if err != nil {
			return fmt.Errorf("controller: place: read %q: %w", name, err)
		}
		if !ok {
			continue // deleted meanwhile
		}
		if err := c.placeWithChildren(ctx, t, candidates); err != nil {
			return err
		}
	}
	return nil
}

// placeWithChildren places t, then each of its children.
func (c *Controller) placeWithChildren(ctx context.Context, t meta.Topic, candidates []string) error {
	if err := c.placeTopic(ctx, t, candidates); err != nil {
		return err
	}
	for _, child := range t.Children {
		ct, ok, err := c.store.Topic(child)
		if err != nil {
			return fmt.Errorf("controller: place: read child %q: %w", child, err)
		}
		if ok {
			if err := c.placeTopic(ctx, ct, candidates); err != nil {
				return err
			}
		}
	}
	return nil
}

// watchPlacement sends batches of applied entries from sub to out until ctx
// ends, each batch holding every change queued at the time, and closes sub.
// A subscription that lagged is renewed at once (what it missed, the next
// 10 s pass sweeps); a store that stopped ends the watch.
func watchPlacement(ctx context.Context, w ports.MetadataWatcher, sub ports.MetaSubscription, out chan<- []ports.MetaChange) {
	for {
		forwardChanges(ctx, sub, out)
		sub.Close()
		if ctx.Err() != nil || errors.Is(sub.Err(), meta.ErrStopped) {
			return
		}
		var err error
		if sub, err = w.Watch(placementWatchBufferCount); err != nil {
			return
		}
	}
}

// forwardChanges runs one subscription until it ends or ctx does.
func forwardChanges(ctx context.Context, sub ports.MetaSubscription, out chan<- []ports.MetaChange) {
	for {
		var batch []ports.MetaChange
		select {
		case <-ctx.Done():
			return
		case ch, ok := <-sub.C():
			if !ok {
				return
			}
			batch = append(batch, ch)
		}
		batch = appendQueued(batch, sub.C())
		select {
		case <-ctx.Done():
			return
		case out <- batch:
		}
	}
}

// appendQueued appends the changes c holds right now, without waiting.
func appendQueued(batch []ports.MetaChange, c <-chan ports.MetaChange) []ports.MetaChange {
	for {
		select {
		case ch, ok := <-c:
			if !ok {
				return batch
			}
			batch = append(batch, ch)
		default:
			return batch
		}
	}
}
