package produce

import (
	"context"
	"log/slog"
	"time"

	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ReleaserDeps are the Releaser's ports; every one is required.
type ReleaserDeps struct {
	Store    Store
	Schedule ports.PartitionSchedule
	Latch    *leaderconfirm.Latch
	Clock    ports.Clock
	Metrics  ports.Metrics
	Self     string
	Logger   *slog.Logger
}

// Releaser is the owner side of a per-message delay: it moves scheduled
// records of the partitions this node owns to their logs once due. It keeps
// one timer, for the earliest next release among owned partitions, so it
// costs nothing while nothing is due (issue 19: O(1) while idle).
type Releaser struct {
	d     ReleaserDeps
	retry map[domain.PartitionRef]time.Time // a partition whose release failed waits
}

// NewReleaser returns a Releaser over d; it panics on a missing dependency.
func NewReleaser(d ReleaserDeps) *Releaser {
	switch {
	case d.Store == nil, d.Schedule == nil, d.Latch == nil, d.Clock == nil, d.Metrics == nil, d.Logger == nil:
		panic("produce: releaser dependency missing")
	case d.Self == "":
		panic("produce: empty node id")
	}
	return &Releaser{d: d, retry: map[domain.PartitionRef]time.Time{}}
}

// Run releases due records until ctx ends: a pass, then a wait for the
// earliest next release, a schedule change or releaseRescanInterval (an
// ownership change needs no schedule change to matter). Before the
// ownership latch is set it looks again every releaseRetryDelay, so a
// restarted owner releases what fell due while it was down within about a
// second of being ready.
func (r *Releaser) Run(ctx context.Context) {
	for ctx.Err() == nil {
		changed := r.d.Schedule.ScheduleChanged()
		wait := releaseRetryDelay // until the ownership latch is set (a start)
		if r.d.Latch.Ready(ctx) {
			wait = releaseRescanInterval
			if next, ok := r.Pass(ctx); ok {
				wait = min(max(next.Sub(r.d.Clock.Now()), 0), releaseRescanInterval)
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

// Pass releases what is due now on every owned partition and answers when
// the next release is due (ok false: nothing scheduled here is owned).
func (r *Releaser) Pass(ctx context.Context) (next time.Time, ok bool) {
	list, err := r.d.Schedule.Scheduled()
	if err != nil {
		r.d.Logger.Error("listing scheduled partitions failed; retrying", "error", err)
		return r.d.Clock.Now().Add(releaseRetryDelay), true
	}
	for _, p := range list {
		if !r.owns(p.Ref) {
			continue
		}
		at := r.releaseOne(ctx, p)
		if !ok || at.Before(next) {
			next, ok = at, true
		}
	}
	return next, ok
}

// releaseOne releases p's due records, a batch at a time, and answers when
// p next needs a pass.
func (r *Releaser) releaseOne(ctx context.Context, p ports.ScheduledPartition) time.Time {
	now := r.d.Clock.Now()
	if at, waiting := r.retry[p.Ref]; waiting && now.Before(at) {
		return at
	}
	delete(r.retry, p.Ref)
	if p.NextMs > now.UnixMilli() {
		return time.UnixMilli(p.NextMs)
	}
	for {
		out, err := r.d.Schedule.Release(ctx, p.Ref, now.UnixMilli(), releaseBatchMaxRecords)
		if out.Count > 0 {
			r.d.Metrics.MessagesProduced(p.Ref.Topic, p.Ref.Partition, out.Count, out.Bytes)
			r.d.Metrics.MessagesReleased(p.Ref.Topic, p.Ref.Partition, out.LagMs)
		}
		if err != nil {
			r.d.Logger.Warn("releasing scheduled messages failed; they stay scheduled and are retried",
				"topic", p.Ref.Topic, "partition", p.Ref.Partition, "error", err)
			at := now.Add(releaseRetryDelay)
			r.retry[p.Ref] = at
			return at
		}
		if out.Count < releaseBatchMaxRecords {
			return now // the store's listing has the partition's next release
		}
	}
}

// owns reports whether this node owns ref's incarnation now.
func (r *Releaser) owns(ref domain.PartitionRef) bool {
	return checkOwner(r.d.Store, r.d.Self, ref) == nil
}
