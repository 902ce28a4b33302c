package deadletter

import (
	"maps"
	"slices"
)

// Table is one partition's receive counts: how often each unsettled offset
// was handed to a consumer, the reason its last nack gave, and which
// offsets are on their way to the dead-letter topic. It changes only
// through Apply, so the caller persists a planned Record first and applies
// it after: a table never runs ahead of its disk. Not safe for concurrent
// use.
type Table struct {
	m map[int64]entry
}

type entry struct {
	count  uint32
	reason string
	intent bool
}

// NewTable returns an empty table.
func NewTable() *Table { return &Table{m: map[int64]entry{}} }

// Step is what one delivery attempt of an offset needs: the record to
// persist before acting on it, and whether the offset is handed to a
// consumer or moved to the dead-letter topic.
type Step struct {
	// Record is to be persisted and applied before the delivery or the
	// dead-lettering; Kind 0 when nothing new needs persisting (an
	// offset already on its way to the dead-letter topic).
	Record Record
	// DeadLetter: do not deliver; move the offset to the dead-letter topic.
	DeadLetter bool
	// Count is the offset's receive count once Record is applied: the
	// delivery's own number, or at a dead-lettering the receives it had.
	Count uint32
}

// Receive plans one delivery attempt of off under a maximum receive count
// (0: no maximum). While the offset has had fewer than maxReceives it is
// delivered and its count grows by one; once a delivery would exceed it
// it goes to the dead-letter topic instead, with the count it reached.
func (t *Table) Receive(off int64, maxReceives uint32) Step {
	e := t.m[off]
	switch {
	case e.intent:
		return Step{DeadLetter: true, Count: e.count}
	case maxReceives > 0 && e.count >= maxReceives:
		return Step{Record: Record{Kind: KindIntent, Offset: off, Count: e.count}, DeadLetter: true, Count: e.count}
	}
	n := e.count + 1
	return Step{Record: Record{Kind: KindCount, Offset: off, Count: n}, Count: n}
}

// Nacked plans keeping reason as off's last nack reason. An empty reason
// keeps the one before it: nothing to persist (Kind 0).
func (t *Table) Nacked(off int64, reason string) Record {
	if reason == "" || t.m[off].reason == reason {
		return Record{}
	}
	return Record{Kind: KindReason, Offset: off, Reason: reason}
}

// Apply takes in one persisted record, in the order it was persisted;
// records that are not Valid are ignored. An intent is final: later counts
// of the same offset do not undo it.
func (t *Table) Apply(r Record) {
	if !r.Valid() {
		return
	}
	e := t.m[r.Offset]
	switch r.Kind {
	case KindCount:
		if !e.intent {
			e.count = r.Count
		}
	case KindReason:
		e.reason = r.Reason
	case KindIntent:
		e.intent, e.count = true, r.Count
	}
	t.m[r.Offset] = e
}

// Count is off's receive count so far.
func (t *Table) Count(off int64) uint32 { return t.m[off].count }

// Reason is the reason off's last nack gave, "" when none did.
func (t *Table) Reason(off int64) string { return t.m[off].reason }

// Len is the number of offsets the table holds.
func (t *Table) Len() int { return len(t.m) }

// Intents lists the offsets on their way to the dead-letter topic,
// ascending: after a restart each must be finished (written to the
// dead-letter topic, then settled in its origin) before anything else.
func (t *Table) Intents() []int64 {
	var out []int64
	for off, e := range t.m {
		if e.intent {
			out = append(out, off)
		}
	}
	slices.Sort(out)
	return out
}

// Prune drops every offset settled reports true for (acked, skipped or
// dead-lettered, durably so in the consumer offsets) and answers how many
// it dropped.
func (t *Table) Prune(settled func(off int64) bool) int {
	n := len(t.m)
	maps.DeleteFunc(t.m, func(off int64, _ entry) bool { return settled(off) })
	return n - len(t.m)
}

// Live lists the records that rebuild the table as it is, by offset: what
// a compacted file holds.
func (t *Table) Live() []Record {
	offs := slices.Sorted(maps.Keys(t.m))
	out := make([]Record, 0, len(offs))
	for _, off := range offs {
		e := t.m[off]
		switch {
		case e.intent:
			out = append(out, Record{Kind: KindIntent, Offset: off, Count: e.count})
		case e.count > 0:
			out = append(out, Record{Kind: KindCount, Offset: off, Count: e.count})
		}
		if e.reason != "" {
			out = append(out, Record{Kind: KindReason, Offset: off, Reason: e.reason})
		}
	}
	return out
}
