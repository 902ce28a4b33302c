package fanout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/narad/narad/application/pause"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// errLinkGone: the child is gone, detached, or attached at another epoch.
var errLinkGone = errors.New("fanout: link dissolved")

// ErrReread: the remote shipper could not hold a slab's unsent records;
// the cursor reads the slab again after a backoff, without advancing.
var ErrReread = errors.New("fanout: read the slab again")

// errUnconfirmed: the leader did not confirm the link, so the cursor does
// not anchor; the next reconcile tries again.
var errUnconfirmed = errors.New("fanout: anchor not confirmed by the leader")

// Why a cursor was stopped.
const (
	stopNone int32 = iota
	stopShutdown
	stopMoved    // the parent partition is no longer owned here: the file stays
	stopLinkGone // the attachment dissolved: the cursor removes its own file
)

// cursor copies one parent partition into one child. Its goroutine owns
// every field but the atomics, which Engine.Cursors reads.
type cursor struct {
	e             *Engine
	base          context.Context // the engine's: outlives the cursor, for cleanup
	ctx           context.Context
	cancel        context.CancelFunc
	key           cursorKey
	ref           domain.PartitionRef // the parent partition, with the parent's incarnation
	epoch         string
	delayMs       int64
	attachOffsets []int64
	lanes         int32  // a remote child's lanes; 0 for a local child
	rr            uint32 // keyless round-robin position
	reason        atomic.Int32

	next           atomic.Int64 // persisted (or anchored) position, -1 before
	dueLagMs       atomic.Int64
	blockedUntilMs atomic.Int64
}

func newCursor(base context.Context, e *Engine, t target) *cursor {
	ctx, cancel := context.WithCancel(base)
	c := &cursor{
		e: e, base: base, ctx: ctx, cancel: cancel, key: t.key,
		ref:   partitionRef(t.key.parent, t.parentID, t.key.partition),
		epoch: t.epoch, delayMs: t.delayMs, attachOffsets: t.attachOffsets, lanes: t.lanes,
		rr: uint32(t.key.partition),
	}
	c.next.Store(-1)
	return c
}

// stop asks the cursor to exit; the first reason given wins.
func (c *cursor) stop(reason int32) {
	c.reason.CompareAndSwap(stopNone, reason)
	c.cancel()
}

func (c *cursor) log() *slog.Logger {
	return c.e.d.Log.With(slog.String("parent", c.ref.String()), slog.String("child", c.key.child), slog.String("epoch", c.epoch))
}

// isRemote reports whether the cursor ships a remote child.
func (c *cursor) isRemote() bool { return c.lanes > 0 }

// remoteCursor names the cursor to the shipper.
func (c *cursor) remoteCursor() RemoteCursor {
	return RemoteCursor{Parent: c.key.parent, ParentID: string(c.ref.TopicID), Partition: c.key.partition, Child: c.key.child, Epoch: c.epoch}
}

// run is the cursor's goroutine: copy until stopped, then clean up.
func (c *cursor) run() {
	defer c.cancel()
	if c.isRemote() {
		defer c.e.d.Remote.Stopped(c.remoteCursor())
	}
	err := c.loop()
	switch {
	case errors.Is(err, errLinkGone) || c.reason.Load() == stopLinkGone:
		c.log().Info("fan-out link dissolved: cursor stops")
		c.cleanup()
	case errors.Is(err, domain.ErrPartitionDirGone):
		c.log().Info("fan-out parent partition directory gone: cursor stops")
	case errors.Is(err, errUnconfirmed):
		c.log().Debug("fan-out cursor waits for the leader to confirm its anchor", slog.Any("error", err))
	case err != nil && c.ctx.Err() == nil:
		c.log().Warn("fan-out cursor stopped; the next reconcile restarts it", slog.Any("error", err))
	}
}

// loop copies slab after slab: read, re-validate, commit, then advance.
func (c *cursor) loop() error {
	next, err := c.begin()
	if err != nil {
		return err
	}
	c.next.Store(next)
	for {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		if _, err := c.validate(); err != nil {
			return err // an idle cursor notices a dissolved link too
		}
		if c.isRemote() {
			if err := c.e.d.Remote.Ready(c.ctx, c.remoteCursor()); err != nil {
				return err
			}
		}
		s, err := c.readSlab(next)
		if err != nil {
			c.readFailed(next, err)
			pause.For(c.ctx, c.e.o.RetryBackoff)
			continue
		}
		if s.end == next {
			continue
		}
		if err := c.deliver(s.recs); errors.Is(err, ErrReread) {
			pause.For(c.ctx, c.e.o.RetryBackoff)
			continue
		} else if err != nil {
			return err
		}
		if err := c.advance(s); err != nil {
			return err
		}
		next = s.end
	}
}

// begin finds where the cursor starts (internals.md §6.3): its own epoch's
// file resumes; no file, a corrupt one or another epoch's starts at the
// attach point, persisted only once the leader confirms the epoch.
func (c *cursor) begin() (int64, error) {
	cur, ok, err := c.e.d.Cursors.Load(c.ref, c.key.child)
	switch {
	case errors.Is(err, domain.ErrCursorCorrupt):
		c.log().Warn("fan-out cursor file corrupt: replaying from the attach point", slog.Any("error", err))
		ok = false
	case err != nil:
		return 0, fmt.Errorf("fanout: load cursor of %s → %s: %w", c.ref, c.key.child, err)
	case ok && cur.Epoch == c.epoch:
		return cur.NextOffset, nil
	case ok:
		c.log().Info("fan-out cursor file of another epoch: not resumed", slog.String("file_epoch", cur.Epoch))
	}
	start, err := c.attachPoint()
	if err != nil {
		return 0, err
	}
	if d := c.e.d.Confirmer.LinkLive(c.ctx, c.key.parent, c.key.child, c.epoch); !d.Destroy {
		if d.Err != nil {
			return 0, fmt.Errorf("%w: %s: %w", errUnconfirmed, d.Reason, d.Err)
		}
		return 0, fmt.Errorf("%w: %s", errUnconfirmed, d.Reason)
	}
	err = c.e.d.Cursors.Store(c.ref, c.key.child, ports.FanoutCursor{Epoch: c.epoch, NextOffset: start})
	switch {
	case errors.Is(err, domain.ErrPartitionDirGone):
		// Nothing was ever written to the parent partition: the first
		// advance persists the cursor.
	case err != nil:
		return 0, fmt.Errorf("fanout: anchor %s → %s at %d: %w", c.ref, c.key.child, start, err)
	}
	c.log().Info("fan-out cursor anchored", slog.Int64("offset", start))
	return start, nil
}

// attachPoint is the §6.3 start: attach_offsets[p], 0 for a partition
// added after the attach, the live tail for a link without offsets (the
// oldest retained offset when a move brought the partition here while the
// link existed).
func (c *cursor) attachPoint() (int64, error) {
	if len(c.attachOffsets) > 0 {
		if int(c.key.partition) < len(c.attachOffsets) {
			return c.attachOffsets[c.key.partition], nil
		}
		return 0, nil
	}
	b, err := c.e.d.Logs.Bounds(c.ref)
	if err != nil {
		return 0, fmt.Errorf("fanout: tail of %s: %w", c.ref, err)
	}
	if moved, err := c.movedWithLink(); err != nil {
		return 0, err
	} else if moved {
		// The link existed when a move installed this partition here: its
		// cursor file should have come along; without it, replay what is
		// retained rather than skip to the tail (internals.md §11.4).
		return b.Oldest, nil
	}
	return b.HighWatermark, nil
}

// movedWithLink reports whether the partition's move.marker names this
// cursor's link at its epoch.
func (c *cursor) movedWithLink() (bool, error) {
	if c.e.d.Markers == nil {
		return false, nil
	}
	m, ok, err := c.e.d.Markers.MoveMarker(c.ref)
	if err != nil {
		return false, fmt.Errorf("fanout: move marker of %s: %w", c.ref, err)
	}
	return ok && m.Has(c.key.child, c.epoch), nil
}

// partitionCounts are the two sizes re-keying needs.
type partitionCounts struct {
	child       meta.Topic
	parentCount int32
}

// validate re-reads the link locally (§6.2 step 2): the child exists, is
// attached to this parent at this epoch, and the parent is still this
// incarnation.
func (c *cursor) validate() (partitionCounts, error) {
	child, ok, err := c.e.d.Store.Topic(c.key.child)
	if err != nil {
		return partitionCounts{}, fmt.Errorf("fanout: read child %q: %w", c.key.child, err)
	}
	if !ok || child.Parent != c.key.parent || child.AttachEpoch != c.epoch || c.isRemote() != child.IsRemoteStub() ||
		!c.isRemote() && child.Partitions < 1 {
		return partitionCounts{}, errLinkGone
	}
	parent, ok, err := c.e.d.Store.Topic(c.key.parent)
	if err != nil {
		return partitionCounts{}, fmt.Errorf("fanout: read parent %q: %w", c.key.parent, err)
	}
	if !ok || parent.ID != string(c.ref.TopicID) {
		return partitionCounts{}, errLinkGone
	}
	return partitionCounts{child: child, parentCount: parent.Partitions}, nil
}

// cleanup removes the cursor's file after its link dissolved, only if the
// file is still its own epoch's and the leader confirms (§6.5). Anything
// short of that keeps the file for the orphan sweep.
func (c *cursor) cleanup() {
	if c.base.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(c.base, cleanupTimeout)
	defer cancel()
	d := c.e.d.Confirmer.LinkGone(ctx, c.key.parent, c.key.child, c.epoch)
	if !d.Destroy {
		c.log().Info("fan-out cursor file kept: link not confirmed gone", slog.String("reason", d.Reason))
		return
	}
	cur, ok, err := c.e.d.Cursors.Load(c.ref, c.key.child)
	if err != nil || !ok || cur.Epoch != c.epoch {
		return
	}
	if err := c.e.d.Cursors.Remove(c.ref, c.key.child); err != nil {
		c.log().Warn("fan-out cursor file not removed", slog.Any("error", err))
		return
	}
	c.log().Info("fan-out cursor file removed", slog.String("reason", d.Reason))
}

// readFailed logs a failed slab read: a log closed under the reader is
// routine (eviction, a retired incarnation), anything else is a warning.
func (c *cursor) readFailed(offset int64, err error) {
	level := slog.LevelWarn
	if errors.Is(err, domain.ErrLogClosed) {
		level = slog.LevelDebug
	}
	c.log().Log(c.ctx, level, "fan-out slab read failed; retrying", slog.Int64("offset", offset), slog.Any("error", err))
}
