package fanout

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad/narad/domain"
)

// cursorKey names one cursor file: a child's cursor on one parent
// partition.
type cursorKey struct {
	parent    string
	partition int32
	child     string
}

// CursorStatus is one running cursor as this node sees it.
type CursorStatus struct {
	Parent    string
	Partition int32
	Child     string
	Epoch     string
	// NextOffset is the next parent offset to copy, as last persisted (or
	// anchored); -1 until the cursor found its start.
	NextOffset int64
	// Lag is the parent's high watermark minus NextOffset; -1 when
	// unknown.
	Lag     int64
	DelayMs int64
	// DueLagSeconds, for a delay child, is how far behind due the oldest
	// record not yet delivered is (0 when nothing due is waiting).
	DueLagSeconds float64
	// BlockedUntilMs, for a delay child, is when the record it waits for
	// becomes due (Unix ms, the parent owner's clock); 0 when not waiting.
	BlockedUntilMs int64
}

// Engine runs this node's fan-out cursors. Run drives it; Cursors and
// Cursor may be called from any goroutine.
type Engine struct {
	d Deps
	o Options

	mu      sync.Mutex
	running map[cursorKey]*cursor
	wg      sync.WaitGroup

	// exits counts cursors that ended: each one calls for a full pass.
	exits atomic.Uint64

	// Reconciler state, touched only by Run's goroutine: the skip counters,
	// and what the last full pass and the last orphan sweep read.
	skips, caughtUpTicks int
	lastPass, lastSweep  passMemo
}

// New returns an engine over d; it panics on a missing dependency.
func New(d Deps, o Options) *Engine {
	switch {
	case d.Store == nil:
		panic("fanout: nil store")
	case d.Logs == nil:
		panic("fanout: nil partition reader")
	case d.Cursors == nil:
		panic("fanout: nil cursor store")
	case d.Local == nil:
		panic("fanout: nil local committer")
	case d.Peers == nil:
		panic("fanout: nil peer committer")
	case d.Latch == nil:
		panic("fanout: nil ownership latch")
	case d.Confirmer == nil:
		panic("fanout: nil confirmer")
	case d.Clock == nil:
		panic("fanout: nil clock")
	case d.Metrics == nil:
		panic("fanout: nil metrics")
	case d.Log == nil:
		panic("fanout: nil logger")
	case d.Self == "":
		panic("fanout: empty node id")
	}
	return &Engine{d: d, o: o.withDefaults(), running: map[cursorKey]*cursor{}}
}

// Run reconciles until ctx ends, then stops every cursor and waits for
// them. Cursors persist only what their child acknowledged, so stopping at
// any point loses nothing.
func (e *Engine) Run(ctx context.Context) error {
	defer e.stopAll()
	t := time.NewTicker(e.o.ReconcileInterval)
	defer t.Stop()
	for {
		e.Reconcile(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Cursors reports every cursor running on this node, sorted by parent,
// partition and child. Lag reads each parent partition's bounds (a peek
// that keeps no log open).
func (e *Engine) Cursors() []CursorStatus {
	e.mu.Lock()
	cs := make([]*cursor, 0, len(e.running))
	for _, c := range e.running {
		cs = append(cs, c)
	}
	e.mu.Unlock()
	out := make([]CursorStatus, 0, len(cs))
	for _, c := range cs {
		out = append(out, e.status(c))
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Parent != b.Parent {
			return a.Parent < b.Parent
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.Child < b.Child
	})
	return out
}

// Cursor reports the cursor of child on parent's partition, ok=false when
// none runs on this node (its file may still hold a position:
// ports.FanoutCursors.Load reads it).
func (e *Engine) Cursor(parent string, partition int32, child string) (CursorStatus, bool) {
	e.mu.Lock()
	c, ok := e.running[cursorKey{parent: parent, partition: partition, child: child}]
	e.mu.Unlock()
	if !ok {
		return CursorStatus{}, false
	}
	return e.status(c), true
}

func (e *Engine) status(c *cursor) CursorStatus {
	st := CursorStatus{
		Parent: c.key.parent, Partition: c.key.partition, Child: c.key.child, Epoch: c.epoch,
		NextOffset: c.next.Load(), Lag: -1, DelayMs: c.delayMs,
		DueLagSeconds: float64(c.dueLagMs.Load()) / 1000, BlockedUntilMs: c.blockedUntilMs.Load(),
	}
	if st.NextOffset >= 0 {
		if b, err := e.d.Logs.Bounds(c.ref); err == nil {
			st.Lag = max(b.HighWatermark-st.NextOffset, 0)
		}
	}
	return st
}

// stopAll stops every cursor and waits until each has exited.
func (e *Engine) stopAll() {
	e.mu.Lock()
	for _, c := range e.running {
		c.stop(stopShutdown)
	}
	e.mu.Unlock()
	e.wg.Wait()
}

// exited forgets c once its goroutine is done, so the next pass may start
// a successor on the same file.
func (e *Engine) exited(c *cursor) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running[c.key] == c {
		delete(e.running, c.key)
	}
	e.exits.Add(1)
}

func (e *Engine) isRunning(k cursorKey) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.running[k]
	return ok
}

func partitionRef(topic string, id string, p int32) domain.PartitionRef {
	return domain.PartitionRef{Topic: topic, TopicID: domain.TopicID(id), Partition: p}
}
