package produce

import (
	"time"

	"github.com/narad/narad/ports"
)

// lingers reports whether ds should wait for more records before its next
// commit, and if so makes sure the dispatcher wakes when the wait ends.
// Nothing lingers while draining, for a failing destination (its probe goes
// at once) or once a full commit is queued (lingerRecordsCount records, or
// the commit byte budget). Otherwise ds
// waits until the later of two deadlines:
//
//   - the spec's linger (internals.md §3.3): while other commits are in
//     flight and its owner's commit latency is known, twice that latency
//     (at most lingerMaxDuration) since its oldest queued record;
//   - the busy linger: on an owner whose recent commits seldom took less
//     than busyLatencyMinDuration (a node short of CPU or disk; how that
//     is judged is in ownerlatency.go), a destination that
//     started a commit less than one busy step ago waits for the next busy
//     boundary, a multiple of the step on the wall clock (busyUntil). The
//     step is busyLingerDuration for this node's partitions and
//     busyRemoteLingerDuration for other nodes'.
//
// The busy linger is ours, not the original's. Under sustained load the
// spec's linger alone makes a commit every few milliseconds per
// destination, one partition fsync and (for a remote owner) one RPC for
// a handful of records, and on a cluster every partition takes commits
// from every node's dispatcher. With each busy destination capped at one
// commit per boundary, the three-node bench sent about 2.5 times fewer
// commit RPCs and (with the combiner's gather) made about 4 times fewer
// partition fsyncs, for at most busyLingerDuration of extra delivery
// latency; a destination that was quiet for a boundary still commits at
// once. A remote step twice the local one cut the three-node bench's
// commit RPCs by another third and made its median run about 15% faster
// (the README's sixth-session paragraphs). On a fast owner the busy linger
// is off: at a light steady load (1,000 msg/s) it cost about 10 ms of
// delivery latency, and because every destination committed on the same
// boundary the fsyncs bunched and produce p99 rose past the 10 ms target.
// Once on, the boundary's bunched commits (and the owner's gather) slow
// commits by themselves, so the owner is judged afresh, without the busy
// linger, every busyRejudgeInterval (docs/performance.md, "Three nodes at
// 1,000 msg/s: the dispatcher's linger", where both regimes are measured).
// Boundaries are on the wall clock so that every node's dispatcher
// sends its batch for a partition at about the same moment, and the
// owner's combiner can fold them into one fsync (combiner.go).
func (d *Dispatcher) lingers(ds *dest, owner string, now time.Time) bool {
	if d.draining || ds.failing || fullCommit(ds.queue) {
		return false
	}
	lat := d.latency[owner]
	var until time.Time
	if lat != nil && lat.busy() {
		until = ds.busyEnd
	}
	if lat != nil && d.inflight > 0 {
		if spec := ds.queuedAt.Add(min(2*lat.avg, lingerMaxDuration)); spec.After(until) {
			until = spec
		}
	}
	if !now.Before(until) {
		return false
	}
	if d.wakeAt.IsZero() || until.Before(d.wakeAt) {
		d.wakeAt = until
	}
	return true
}

// fullCommit reports whether queue already holds a commit that lingering
// could not make bigger: lingerRecordsCount records, or records filling the
// commit byte budget.
func fullCommit(queue []ports.WALEntry) bool {
	if len(queue) >= lingerRecordsCount {
		return true
	}
	size := 0
	for _, e := range queue {
		size += recordBytes(e)
	}
	return size >= commitBudgetBytes
}

// busyStep is the busy boundary for owner's destinations: a remote commit
// costs an RPC besides the fsync, so remote destinations gather twice as
// long.
func (d *Dispatcher) busyStep(owner string) time.Duration {
	if owner == d.self {
		return busyLingerDuration
	}
	return busyRemoteLingerDuration
}

// busyUntil is the first busy boundary after a commit started at launched:
// the next multiple of step since the Unix epoch.
func busyUntil(launched time.Time, step time.Duration) time.Time {
	return time.Unix(0, (launched.UnixNano()/int64(step)+1)*int64(step))
}

// lingerWake returns a channel that fires when the earliest linger noted in
// the last pass ends (nil when none lingers), so a lingering destination
// commits on time rather than at the next backstop tick.
func (d *Dispatcher) lingerWake(timer *time.Timer) <-chan time.Time {
	if d.wakeAt.IsZero() {
		return nil
	}
	timer.Reset(max(d.wakeAt.Sub(d.clock.Now()), 0))
	return timer.C
}
