package moves

import (
	"context"
	"log/slog"

	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// SweepDeps are what the stale-copy sweep needs (internals.md §11.6); a
// Runner without them runs no sweep.
type SweepDeps struct {
	// Copies lists and drops this node's partition directories.
	Copies ports.StaleCopies
	// Local lists this node's copy of a partition as a source would.
	Local ports.PartitionTransfer
	// Confirm asks the Raft leader before a copy is dropped.
	Confirm interface {
		NotOwner(ctx context.Context, ref domain.PartitionRef, self string) leaderconfirm.Decision
	}
}

func (d SweepDeps) enabled() bool { return d.Copies != nil && d.Local != nil && d.Confirm != nil }

// partKey names a partition across incarnations.
type partKey struct {
	topic     string
	partition int32
}

// startSweep starts the stale-copy sweep unless one still runs, or the
// last one found nothing to judge and the assignments have not moved since
// it started listing: what it judges (copies here placed elsewhere, staging
// no move targets here) changes only with them. A full sweep still runs at
// least every sweepFullEverySweeps sweeps.
func (r *Runner) startSweep(ctx context.Context) {
	if !r.d.Sweep.enabled() {
		return
	}
	v := r.d.Store.Versions().Of(meta.ViewAssignments)
	if r.cleanAt.Load() == v+1 && r.sweepsSkipped+1 < sweepFullEverySweeps {
		r.sweepsSkipped++
		return
	}
	if !r.swept.CompareAndSwap(false, true) {
		return
	}
	r.sweepsSkipped = 0
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer r.swept.Store(false)
		next := uint64(0)
		if r.sweep(ctx) {
			next = v + 1
		}
		r.cleanAt.Store(next)
	}()
}

// sweep judges every copy of a partition this node holds but neither owns
// nor is receiving, and drops it: reclaimed when the owner vouches for
// all of it, set aside for an operator otherwise. Anything it cannot
// confirm (no leader, the owner unreachable, a worker running for the
// partition) waits for the next sweep. It reports whether it found nothing
// to judge: no such copy, no staging to remove, no read failing.
func (r *Runner) sweep(ctx context.Context) (clean bool) {
	refs, err := r.d.Sweep.Copies.LocalPartitions()
	if err != nil {
		r.d.Log.Warn("stale-copy sweep: list partitions", slog.Any("error", err))
		return false
	}
	clean = true
	for _, ref := range refs {
		if ctx.Err() != nil {
			return false
		}
		judge, ok := r.candidate(ref)
		clean = clean && ok && !judge
		if !judge || !r.claim(ref) {
			continue
		}
		r.sweepOne(ctx, ref)
		r.release(ref)
	}
	return r.sweepStaging() && clean
}

// sweepStaging removes the staging of every move that no longer targets
// this node and has no worker here (a destination that was down when its
// move was aborted or planned elsewhere). Staging is a partial copy of a
// partition its owner still holds: removing it loses nothing.
// It reports whether there was none to remove and nothing failed.
func (r *Runner) sweepStaging() (clean bool) {
	staged, err := r.d.Sweep.Copies.StagedPartitions()
	if err != nil {
		r.d.Log.Warn("stale-copy sweep: list staging", slog.Any("error", err))
		return false
	}
	clean = true
	for _, ref := range staged {
		row, ok, err := r.d.Store.Assignment(ref.Topic, ref.Partition)
		if err == nil && ok && row.Target == r.d.Self {
			continue
		}
		clean = false
		if err != nil || !r.claim(ref) {
			continue
		}
		if err := r.d.Installer.StagingRemove(ref); err != nil {
			r.d.Log.Warn("stale-copy sweep: remove staging", slog.String("topic", ref.Topic), slog.Any("error", err))
		} else {
			r.d.Log.Info("stale-copy sweep: removed the staging of a move that ended elsewhere",
				slog.String("topic", ref.Topic), slog.Int("partition", int(ref.Partition)))
		}
		r.release(ref)
	}
	return clean
}

// candidate reads the local replica: the copy is of the live incarnation
// and the partition is placed on another node with no move to this one.
// read is false when the replica could not be read.
func (r *Runner) candidate(ref domain.PartitionRef) (judge, read bool) {
	row, ok, err := r.d.Store.Assignment(ref.Topic, ref.Partition)
	return err == nil && ok && row.BelongsTo(string(ref.TopicID)) && row.Owner != "" &&
		row.Owner != r.d.Self && row.Target != r.d.Self, err == nil
}

// sweepOne confirms with the leader, asks the owner, judges and drops.
func (r *Runner) sweepOne(ctx context.Context, ref domain.PartitionRef) {
	log := r.d.Log.With(slog.String("topic", ref.Topic), slog.Int("partition", int(ref.Partition)))
	if d := r.d.Sweep.Confirm.NotOwner(ctx, ref, r.d.Self); !d.Destroy {
		log.Debug("stale-copy sweep: kept", slog.String("reason", d.Reason), slog.Any("error", d.Err))
		return
	}
	row, ok, err := r.d.Store.Assignment(ref.Topic, ref.Partition) // current: the confirmation passed a barrier
	if err != nil || !ok || !row.BelongsTo(string(ref.TopicID)) || row.Owner == r.d.Self || row.Target == r.d.Self {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	owner, err := r.d.Peers.TransferListing(cctx, row.Owner, ref)
	cancel()
	if err != nil {
		log.Debug("stale-copy sweep: owner unreachable; deferred", slog.String("owner", row.Owner), slog.Any("error", err))
		return
	}
	local, err := r.d.Sweep.Local.TransferListing(ref)
	if err != nil {
		log.Warn("stale-copy sweep: own copy unlistable; deferred", slog.Any("error", err))
		return
	}
	v := judgeStale(local, owner)
	deleted, err := r.d.Sweep.Copies.DropStaleCopy(ref, v.Action == staleReclaim, v.Guard)
	switch {
	case err != nil:
		log.Warn("stale-copy sweep: drop failed", slog.Any("error", err))
	case deleted:
		log.Info("stale copy of a moved partition reclaimed", slog.String("owner", row.Owner), slog.String("reason", v.Reason))
	default:
		log.Error("stale copy of a moved partition set aside for an operator", slog.String("owner", row.Owner),
			slog.String("reason", v.Reason), slog.Int64("copy_boundary", local.HighWatermark))
	}
}

// claim marks ref as being swept unless a worker runs for it; a worker
// for ref does not start while it is marked.
func (r *Runner) claim(ref domain.PartitionRef) bool {
	key := partKey{ref.Topic, ref.Partition}
	r.mu.Lock()
	defer r.mu.Unlock()
	for mv := range r.running {
		if mv.Topic == ref.Topic && mv.Partition == ref.Partition {
			return false
		}
	}
	r.sweeping[key] = true
	return true
}

func (r *Runner) release(ref domain.PartitionRef) {
	r.mu.Lock()
	delete(r.sweeping, partKey{ref.Topic, ref.Partition})
	r.mu.Unlock()
}
