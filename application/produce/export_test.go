package produce

import (
	"time"

	"github.com/narad/narad/domain"
)

// QueuedBatches is how many batches wait on ref's combiner (tests only).
func (c *Committer) QueuedBatches(ref domain.PartitionRef) int {
	c.comb.mu.Lock()
	defer c.comb.mu.Unlock()
	if q := c.comb.parts[ref]; q != nil {
		return len(q.waiting)
	}
	return 0
}

// BusyLinger is busyLingerDuration (tests only).
const BusyLinger = busyLingerDuration

// BusyLatencyMin is busyLatencyMinDuration (tests only).
const BusyLatencyMin = busyLatencyMinDuration

// BusyRemoteLinger is busyRemoteLingerDuration (tests only).
const BusyRemoteLinger = busyRemoteLingerDuration

// BusyUntil is busyUntil (tests only).
func BusyUntil(launched time.Time, step time.Duration) time.Time { return busyUntil(launched, step) }

// SetGatherMax replaces the combiner's gather bound (tests only).
func (c *Committer) SetGatherMax(d time.Duration) {
	c.comb.mu.Lock()
	defer c.comb.mu.Unlock()
	c.comb.gatherMax = d
}

// CommitGroupMax is commitGroupMaxCount (tests only).
const CommitGroupMax = commitGroupMaxCount

// Sleeping reports whether Run waits without its backstop: nothing it
// holds depends on the clock (tests only).
func (d *Dispatcher) Sleeping() bool { return d.sleeping.Load() }

// BusyWindow is busyWindowCommits (tests only).
const BusyWindow = busyWindowCommits

// BusyRejudge is busyRejudgeInterval (tests only).
const BusyRejudge = busyRejudgeInterval

// FillLatency gives owner a full window of commits that each took took,
// after as many unjudged first commits, as if d had measured them all now
// (tests only; call before Run).
func (d *Dispatcher) FillLatency(owner string, took time.Duration) {
	for range 2 * busyWindowCommits {
		d.observe(owner, took)
	}
}

// Sample is one commit's latency and the time it ended (tests only).
type Sample struct {
	Took time.Duration
	At   time.Time
}

// BusyAfter reports whether an owner whose commits were samples, oldest
// first, counts as busy (tests only).
func BusyAfter(samples ...Sample) bool {
	var l ownerLatency
	for _, s := range samples {
		l.observe(s.Took, s.At)
	}
	return l.busy()
}
