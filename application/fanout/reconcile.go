package fanout

import (
	"context"
	"log/slog"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// target is one desired cursor: what the reconciler starts a cursor with.
type target struct {
	key           cursorKey
	parentID      string
	epoch         string
	delayMs       int64
	attachOffsets []int64
	lanes         int32 // a remote child's lanes; 0 for a local child
}

// linkID names one attachment: a link at one epoch.
type linkID struct{ parent, child, epoch string }

// Reconcile is one tick (internals.md §6.1): skipped unless the replica is
// caught up and the ownership latch set; then, unless the last full pass
// still describes the replica (passmemo.go), a full pass stops the cursors
// no longer desired and starts the missing ones (never over a draining
// predecessor). On the first and every 30th caught-up tick it also sweeps
// orphan cursor files, when anything moved since the last clean sweep.
// Run calls it every ReconcileInterval; it must not run concurrently with
// Run or itself.
func (e *Engine) Reconcile(ctx context.Context) {
	if !e.d.Store.CaughtUp() || !e.d.Latch.Ready(ctx) {
		e.skips++
		e.lastPass.valid, e.lastSweep.valid = false, false
		if e.skips%skipLogEveryCount == 1 {
			e.d.Log.Info("fan-out reconcile skipped: metadata replica not caught up", slog.Int("skips", e.skips))
		}
		return
	}
	e.caughtUpTicks++
	sweepTick := e.caughtUpTicks%orphanSweepEveryTicks == 1
	now := e.d.Clock.Now()
	if !sweepTick && e.lastPass.current(now, e.d.Store.Versions(), e.exits.Load(), fullPassMaxInterval) {
		return
	}
	memo := e.snapshot()
	want, live, err := e.desired()
	if err != nil {
		e.lastPass.valid = false
		e.d.Log.Warn("fan-out reconcile: cannot read the links", slog.Any("error", err))
		return
	}
	e.stopUndesired(want, live)
	e.startMissing(ctx, want)
	e.lastPass = memo
	if sweepTick && !e.lastSweep.current(now, memo.versions, memo.exits, orphanSweepMaxInterval) {
		if e.sweep(ctx) {
			e.lastSweep = memo
		} else {
			e.lastSweep.valid = false
		}
	}
}

// desired returns the cursors this node should run (links × parent
// partitions it owns) and every live attachment.
func (e *Engine) desired() (map[cursorKey]target, map[linkID]bool, error) {
	links, err := e.d.Store.Links()
	if err != nil {
		return nil, nil, err
	}
	want := map[cursorKey]target{}
	live := make(map[linkID]bool, len(links))
	owned := map[string]ownedParent{}
	for _, l := range links {
		live[linkID{l.Parent, l.Child, l.Epoch}] = true
		if l.Remote != nil && e.d.Remote == nil {
			continue // this engine ships to no remote
		}
		op, ok := owned[l.Parent]
		if !ok {
			if op, err = e.ownedPartitions(l.Parent); err != nil {
				return nil, nil, err
			}
			owned[l.Parent] = op
		}
		for _, p := range op.partitions {
			k := cursorKey{parent: l.Parent, partition: p, child: l.Child}
			t := target{key: k, parentID: op.id, epoch: l.Epoch, delayMs: l.DelayMs, attachOffsets: l.AttachOffsets}
			if l.Remote != nil {
				t.lanes = max(l.Remote.Lanes, 1)
			}
			want[k] = t
		}
	}
	return want, live, nil
}

type ownedParent struct {
	id         string
	partitions []int32
}

// ownedPartitions lists the partitions of topic this node owns, for the
// topic's live incarnation.
func (e *Engine) ownedPartitions(topic string) (ownedParent, error) {
	t, ok, err := e.d.Store.Topic(topic)
	if err != nil || !ok {
		return ownedParent{}, err
	}
	rows, err := e.d.Store.Assignments(topic)
	if err != nil {
		return ownedParent{}, err
	}
	op := ownedParent{id: t.ID}
	for _, r := range rows {
		if owns(r, t, e.d.Self) {
			op.partitions = append(op.partitions, r.Partition)
		}
	}
	return op, nil
}

func owns(r meta.Assignment, t meta.Topic, self string) bool {
	return r.Owner == self && r.Partition >= 0 && r.Partition < t.Partitions && r.BelongsTo(t.ID)
}

// stopUndesired stops each running cursor that is no longer wanted: with
// stopLinkGone when its attachment dissolved (it then removes its own
// file), else stopMoved (the file stays: it moves with the partition).
func (e *Engine) stopUndesired(want map[cursorKey]target, live map[linkID]bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, c := range e.running {
		t, ok := want[k]
		switch {
		case ok && t.epoch == c.epoch && t.parentID == string(c.ref.TopicID):
		case !live[linkID{k.parent, k.child, c.epoch}]:
			c.stop(stopLinkGone)
		default:
			c.stop(stopMoved)
		}
	}
}

// startMissing starts a cursor for every wanted file with none running.
// A stopping cursor still counts as running: its successor waits.
func (e *Engine) startMissing(ctx context.Context, want map[cursorKey]target) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, t := range want {
		if _, ok := e.running[k]; ok {
			continue
		}
		c := newCursor(ctx, e, t)
		e.running[k] = c
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			c.run()
			e.exited(c)
		}()
	}
}

// sweep removes cursor files on this node's partitions whose link the
// leader confirms dissolved (§6.5): only files no cursor runs on. It
// reports whether it finished with nothing left to retry.
func (e *Engine) sweep(ctx context.Context) bool {
	topics, err := e.d.Store.ListTopics("", 0)
	if err != nil {
		e.d.Log.Warn("fan-out orphan sweep: cannot list topics", slog.Any("error", err))
		return false
	}
	clean := true
	for _, t := range topics {
		if ctx.Err() != nil {
			return false
		}
		rows, err := e.d.Store.Assignments(t.Name)
		if err != nil {
			clean = false
			continue
		}
		for _, r := range rows {
			if owns(r, t, e.d.Self) && !e.sweepPartition(ctx, partitionRef(t.Name, t.ID, r.Partition)) {
				clean = false
			}
		}
	}
	return clean
}

// sweepPartition sweeps one partition's cursor files; false when a file
// could not be judged or removed (a later sweep retries it).
func (e *Engine) sweepPartition(ctx context.Context, ref domain.PartitionRef) bool {
	kids, err := e.d.Cursors.Children(ref)
	if err != nil {
		e.d.Log.Warn("fan-out orphan sweep: cannot list cursor files", slog.String("parent", ref.String()), slog.Any("error", err))
		return false
	}
	clean := true
	for _, child := range kids {
		if e.isRunning(cursorKey{parent: ref.Topic, partition: ref.Partition, child: child}) {
			continue
		}
		cur, ok, err := e.d.Cursors.Load(ref, child)
		if err != nil || !ok {
			continue // a corrupt file names no epoch to confirm: kept
		}
		d := e.d.Confirmer.LinkGone(ctx, ref.Topic, child, cur.Epoch)
		if !d.Destroy {
			if d.Err != nil {
				clean = false
			}
			e.d.Log.Debug("fan-out orphan sweep kept a cursor file", slog.String("parent", ref.String()), slog.String("child", child),
				slog.String("reason", d.Reason), slog.Any("error", d.Err))
			continue
		}
		if err := e.d.Cursors.Remove(ref, child); err != nil {
			clean = false
			e.d.Log.Warn("fan-out orphan sweep: remove failed", slog.String("parent", ref.String()), slog.String("child", child), slog.Any("error", err))
			continue
		}
		e.d.Log.Info("fan-out orphan cursor file removed", slog.String("parent", ref.String()), slog.String("child", child),
			slog.String("epoch", cur.Epoch), slog.String("reason", d.Reason))
	}
	return clean
}
