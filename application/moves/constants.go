package moves

import "time"

// Move constants (internals.md §11.8).
const (
	// FreezeTTL is how long a source's freeze holds without a re-arm.
	FreezeTTL = 30 * time.Second
	// freezeRearmInterval is how often a destination re-arms the freeze
	// it holds (TTL/4).
	freezeRearmInterval = FreezeTTL / 4
	// runnerTickInterval paces the move runner's look for inbound moves;
	// runnerFullPassTicks forces a listing every 30 ticks even while the
	// assignments stand still.
	runnerTickInterval  = time.Second
	runnerFullPassTicks = 30
	// sweepEveryTicks: the stale-copy sweep runs every 30th runner tick;
	// while the last one found nothing to judge and the assignments stand
	// still it is skipped, but not sweepFullEverySweeps times in a row.
	sweepEveryTicks      = 30
	sweepFullEverySweeps = 10
	// leaseDrainMax bounds how long a freezing source waits for its
	// outstanding leases to settle before the capture (or TTL/4 if
	// shorter); leaseDrainPoll paces the look.
	leaseDrainMax  = 500 * time.Millisecond
	leaseDrainPoll = 10 * time.Millisecond
	// chunkBytes is one copy read.
	chunkBytes = 1 << 20
	// convergedLagBytes: a pre-copy pass that copied at most this much has
	// converged; the freeze comes next.
	convergedLagBytes = 4 << 20
	// precopyPassesMax and precopyStallPassesMax end a pre-copy that does
	// not converge: after 20 passes, or 3 passes without shrinking.
	precopyPassesMax      = 20
	precopyStallPassesMax = 3
	// passInterval separates two copy passes.
	passInterval = 50 * time.Millisecond
	// quietPassesFinal: the capture is final after this many consecutive
	// passes that copy nothing and see the same high watermark.
	quietPassesFinal = 2
	// retryBackoff separates two attempts of a failed move.
	retryBackoff = 2 * time.Second
	// attemptLogEvery: a move that keeps failing (its source down) logs
	// its first failure and one in this many at warn.
	attemptLogEvery = 30
	// flipReproposeWindow bounds how long a destination re-proposes a flip
	// of unknown outcome under the re-armed freeze; flipSettleDuration is
	// how long after the last such proposal it waits before taking its
	// copy off; flipReadInterval paces its leader reads.
	flipReproposeWindow = 2 * time.Minute
	flipSettleDuration  = 15 * time.Second
	flipReadInterval    = time.Second
	// ForcePromoteAfter: a destination holding a whole copy of the
	// source's last listing flips without a freeze once the source has
	// been dead this long (internals.md §11.6).
	ForcePromoteAfter = 2 * time.Minute
	// callTimeout bounds one copy call to the source.
	callTimeout = 10 * time.Second
)
