package produce

import (
	"math/bits"
	"time"
)

// ownerLatency is what a dispatcher has measured of one owner's commits:
// the moving average the spec's linger uses (internals.md §3.3), and which
// of up to busyWindowCommits recent commits were fast, which decides the
// busy linger.
//
// The busy linger asks how fast the owner can commit, not how fast it
// committed on average, and it asks three ways that a few slow commits
// cannot answer for the rest:
//
//   - an owner is busy only when more than busyWindowCommits -
//     busyFastMinCount of its window's commits took busyLatencyMinDuration
//     or more, so a quarter of fast commits keeps it off and no outlier
//     decides;
//   - the first busyWindowCommits commits to an owner are not judged: they
//     include the dial, the handshake and the opening of its streams (9 to
//     36 ms on loopback);
//   - the window starts again at every multiple of busyRejudgeInterval on
//     the wall clock, so every node's dispatcher measures the owner
//     without the busy linger at about the same time. Once on, the busy
//     linger slows commits itself: every node sends its batches at the same
//     boundary and the owner's combiner gathers them, so a window measured
//     under it says little about the owner.
//
// With an average seeded by the first commits, a light load (1,000 msg/s on
// three nodes on one VM) ran with the busy linger on or off depending on
// how the run started, and stayed so (docs/performance.md, "Three nodes at
// 1,000 msg/s: the dispatcher's linger").
type ownerLatency struct {
	avg   time.Duration
	seen  int   // commits observed, counted up to busyWindowCommits
	epoch int64 // the busyRejudgeInterval the window belongs to
	taken int   // commits in the window, at most busyWindowCommits
	next  int   // the window's slot the next commit takes
	// fast has bit i set when the commit in slot i took less than
	// busyLatencyMinDuration: all the window needs to know of it.
	fast uint64
}

// The window's slots are the bits of ownerLatency.fast.
var _ [64 - busyWindowCommits]struct{}

// observe takes the latency of one commit that ended at now.
func (l *ownerLatency) observe(took time.Duration, now time.Time) {
	if l.seen == 0 {
		l.avg = took
	} else {
		l.avg += (took - l.avg) * latencyWeightPercent / 100
	}
	if l.seen < busyWindowCommits {
		l.seen++
		return
	}
	if epoch := now.UnixNano() / int64(busyRejudgeInterval); epoch != l.epoch {
		l.epoch = epoch
		l.taken, l.next, l.fast = 0, 0, 0
	}
	bit := uint64(1) << l.next
	l.fast &^= bit // the slot's earlier commit leaves the window
	if took < busyLatencyMinDuration {
		l.fast |= bit
	}
	l.next = (l.next + 1) % busyWindowCommits
	l.taken = min(l.taken+1, busyWindowCommits)
}

// busy reports whether the owner looks short of CPU or disk: its window
// holds so many slow commits that a full window could not hold
// busyFastMinCount fast ones.
func (l *ownerLatency) busy() bool {
	return l.taken-bits.OnesCount64(l.fast) > busyWindowCommits-busyFastMinCount
}
