package fanout

import (
	"context"
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Peeker is the one partition-log method the lag reader uses:
// ports.PartitionLogs satisfies it. LogStats never opens or stamps a log,
// so a children listing keeps no log open (internals.md §6.6).
type Peeker interface {
	LogStats(ref domain.PartitionRef) (ports.LogStats, error)
}

// LagReader reads where the fan-out cursors of the parent partitions this
// node owns stand: the children listing's local half and the owner side of
// node RPC op 17, FanoutCursors (api.md §2.11). A cursor running here
// answers from memory; one that is not running (a restart, a reconcile not
// yet done) from its cursor file. Safe for concurrent use.
type LagReader struct {
	e    *Engine
	logs Peeker
}

// NewLagReader returns a LagReader over e's cursors, store and cursor
// files; logs peeks the parents' high watermarks. It panics on a missing
// dependency (a wiring error).
func NewLagReader(e *Engine, logs Peeker) *LagReader {
	switch {
	case e == nil:
		panic("fanout: nil engine")
	case logs == nil:
		panic("fanout: nil partition peeker")
	}
	return &LagReader{e: e, logs: logs}
}

// FanoutLag returns one ports.CursorLag per (partition, child) pair,
// partitions outer and children inner (ports.PeerFanoutLag's order), for
// parent's incarnation parentID (empty: the live one). A partition this
// node's replica does not assign to it for that incarnation, or whose log
// cannot be peeked, is not reported for any child; a child's cursor is
// reported only at the epoch asked and once anchored. It refuses the whole
// request with domain.ErrTopicNotFound (no such incarnation here),
// domain.ErrUnavailable (the replica cannot be read) or ctx.Err().
func (r *LagReader) FanoutLag(ctx context.Context, parent string, parentID domain.TopicID, parts []int32, children []ports.ChildEpoch) ([]ports.CursorLag, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t, err := r.liveParent(parent, parentID)
	if err != nil {
		return nil, err
	}
	out := make([]ports.CursorLag, len(parts)*len(children))
	for i, p := range parts {
		ref := partitionRef(t.Name, t.ID, p)
		owned, err := r.owns(t, p)
		if err != nil {
			return nil, err
		}
		if !owned {
			continue
		}
		ls, err := r.logs.LogStats(ref)
		if err != nil {
			continue // a log that cannot answer now reports nothing
		}
		for j, c := range children {
			next, ok := r.position(ref, c)
			if ok {
				out[i*len(children)+j] = ports.CursorLag{Reported: true, NextOffset: next, HighWatermark: ls.HighWatermark}
			}
		}
	}
	return out, nil
}

// liveParent reads parent and checks that id, when given, is the
// incarnation this replica holds.
func (r *LagReader) liveParent(parent string, id domain.TopicID) (meta.Topic, error) {
	t, ok, err := r.e.d.Store.Topic(parent)
	switch {
	case err != nil:
		return meta.Topic{}, fmt.Errorf("fanout: read topic %q: %w: %w", parent, domain.ErrUnavailable, err)
	case !ok:
		return meta.Topic{}, fmt.Errorf("fanout: topic %q absent on %s: %w", parent, r.e.d.Self, domain.ErrTopicNotFound)
	case id != "" && string(id) != t.ID:
		return meta.Topic{}, fmt.Errorf("fanout: %s holds incarnation %q of %q, asked for %q: %w",
			r.e.d.Self, t.ID, parent, id, domain.ErrTopicNotFound)
	}
	return t, nil
}

// owns reports whether this replica assigns t's partition p to this node
// (the reconciler's test).
func (r *LagReader) owns(t meta.Topic, p int32) (bool, error) {
	if p < 0 || p >= t.Partitions {
		return false, nil
	}
	row, ok, err := r.e.d.Store.Assignment(t.Name, p)
	if err != nil {
		return false, fmt.Errorf("fanout: read assignment of %s/%d: %w: %w", t.Name, p, domain.ErrUnavailable, err)
	}
	return ok && owns(row, t, r.e.d.Self), nil
}

// position is the next offset of c's cursor on ref at c's epoch: the
// running cursor's once anchored, else its file's. A corrupt or unreadable
// file, or one of another epoch, reports nothing.
func (r *LagReader) position(ref domain.PartitionRef, c ports.ChildEpoch) (int64, bool) {
	if next, running := r.e.runningPosition(ref, c); running {
		return next, next >= 0
	}
	cur, ok, err := r.e.d.Cursors.Load(ref, c.Child)
	if err != nil || !ok || cur.Epoch != c.Epoch {
		return 0, false
	}
	return cur.NextOffset, true
}

// runningPosition is the position of the cursor running on ref for c's
// child, when one runs for ref's incarnation: -1 when it runs at another
// epoch or has not anchored yet.
func (e *Engine) runningPosition(ref domain.PartitionRef, c ports.ChildEpoch) (next int64, running bool) {
	e.mu.Lock()
	cur, ok := e.running[cursorKey{parent: ref.Topic, partition: ref.Partition, child: c.Child}]
	e.mu.Unlock()
	if !ok || cur.ref.TopicID != ref.TopicID {
		return 0, false
	}
	if cur.epoch != c.Epoch {
		return -1, true
	}
	return cur.next.Load(), true
}
