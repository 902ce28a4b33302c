package meta

import "fmt"

// Downgrade returns what a proposer proposes for env under gate g (internals
// §8.2, §8.3): env itself when g allows its type; else the legacy entries
// (types 1–22) that do its work, when it has them; else an error wrapping
// ErrTypeHeldBack that names the holder.
//
// A legacy form loses what the newer entry checked inside the state machine
// (the incarnation, insert-only placement, the judged heartbeat, releasing
// the deleted user's topics, one transaction for create + schema + link), so
// the proposer keeps its leader-side checks (name lock, barrier, owner
// re-check) and proposes the entries in order, stopping at the first one
// that is refused.
func Downgrade(env Envelope, g Gate) ([]Envelope, error) {
	if env.Event == nil {
		return nil, fmt.Errorf("downgrade: nil event: %w", ErrInvalidEvent)
	}
	t := env.Event.Type()
	ok, holder := g.Allows(t)
	if ok {
		return []Envelope{env}, nil
	}
	events := legacyForm(env.Event)
	if len(events) == 0 {
		return nil, fmt.Errorf("%s %s held back by %s: %w", t, env.Event.Subject(), holder, ErrTypeHeldBack)
	}
	out := make([]Envelope, 0, len(events))
	for _, ev := range events {
		out = append(out, Envelope{Actor: env.Actor, AtMs: env.AtMs, Event: ev})
	}
	return out, nil
}

// legacyForm returns the legacy entries doing ev's work, or none when ev has
// no legacy form (PruneAssignment, the remote types) or is legacy already.
func legacyForm(ev Event) []Event {
	switch e := ev.(type) {
	case *CreateTopicWith:
		return createWithLegacy(e)
	case *UpdateTopicIf:
		u := e.UpdateTopic
		return []Event{&u}
	case *DeleteTopicIf:
		return []Event{&DeleteTopic{Name: e.Name}}
	case *PutSchemaIf:
		p := e.PutSchema
		return []Event{&p}
	case *AttachChildIf:
		a := e.AttachChild
		return []Event{&a}
	case *DetachChildIf:
		d := e.DetachChild
		return []Event{&d}
	case *AssignPartitionIfAbsent:
		return []Event{&AssignPartition{Topic: e.Topic, Partition: e.Partition, Owner: e.Owner}}
	case *MarkMemberDeadIf:
		return []Event{&MemberDead{ID: e.ID}}
	case *DeleteUserReleaseTopics:
		return []Event{&DeleteUser{Username: e.Username}}
	}
	return nil
}

// createWithLegacy splits a CreateTopicWith into CreateTopic, PutSchema
// (version 1) and AttachChild, in the order the one entry applies them.
func createWithLegacy(e *CreateTopicWith) []Event {
	c := e.CreateTopic
	out := []Event{&c}
	if e.Schema != nil {
		out = append(out, &PutSchema{Topic: e.Name, Version: 1, Schema: e.Schema})
	}
	if p := e.Parent; p != nil {
		out = append(out, &AttachChild{Parent: p.Name, Child: e.Name, Epoch: p.Epoch, DelayMs: p.DelayMs, Offsets: p.Offsets})
	}
	return out
}
