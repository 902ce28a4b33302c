package produce

import "time"

// Accept limits (api.md §2.13, §2.13.1; internals.md §3.1-3.2).
const (
	// MessageMaxBytes caps one message's payload (1 MiB, exactly the cap is
	// accepted).
	MessageMaxBytes = 1 << 20
	// BatchMaxMessages caps the messages of one batch produce.
	BatchMaxMessages = 1000
	// rotationIdleTimeout: a topic's keyless rotation unused this long is
	// forgotten (the next keyless produce starts a new one at random).
	rotationIdleTimeout = 10 * time.Minute
	// rotationPruneInterval: how often the rotation table is swept.
	rotationPruneInterval = time.Minute
	// topicCacheMaxCount bounds the topic cache; past it the cache starts
	// empty again.
	topicCacheMaxCount = 4096
	// DeliverAtMaxMs is the latest deliver-at a scheduled message may name
	// (9999-12-31T23:59:59.999Z) on a topic that keeps records forever; a
	// topic with a retention takes no delay beyond it.
	DeliverAtMaxMs = 253402300799999
)

// Metric reasons of narad_produce_rejections_total (api.md §7).
const (
	rejectSchema       = "schema"
	rejectDelayedChild = "delayed_child"
	rejectRemoteChild  = "remote_child"
)

// Owner-side combiner (internals.md §3.8; the gather is ours).
const (
	// combineGatherDuration: how long a cycle on a partition fed by
	// several callers waits for their batches before it commits.
	combineGatherDuration = 2 * time.Millisecond
	// combineRecentDuration: a partition gathers while a cycle combined
	// several batches less than this long ago; idle partitions' history is
	// dropped after it.
	combineRecentDuration = 100 * time.Millisecond
)

// Dispatcher (internals.md §3.3).
const (
	// dispatchBackstopInterval wakes the dispatcher when no durable-next
	// notification arrives; deadlines (linger, backoff, rescan) are checked
	// at least this often.
	dispatchBackstopInterval = 10 * time.Millisecond
	// commitsInFlightMaxCount bounds commits running at once across
	// destinations (hung commits excluded).
	commitsInFlightMaxCount = 16
	// windowPerDestRecords, windowMinRecords, windowMaxRecords size the
	// window of records held in memory: 64 per destination seen, clamped.
	windowPerDestRecords = 64
	windowMinRecords     = 4096
	windowMaxRecords     = 65536
	// queueMinCapRecords is the floor of the per-destination queue cap (a
	// quarter of the window).
	queueMinCapRecords = 4096
	// lookaheadWindows bounds how far past a stuck record the reader goes.
	lookaheadWindows = 16
	// readChunkRecords is how many entries one WAL read asks for.
	readChunkRecords = 1024
	// lingerRecordsCount: a destination holding fewer records lingers while
	// other commits are in flight.
	lingerRecordsCount = 64
	// lingerMaxDuration caps a linger.
	lingerMaxDuration = 50 * time.Millisecond
	// busyLingerDuration: a destination on this node that started a
	// commit less than this long ago holds its next batch until the next
	// multiple of it on the wall clock (ours, not the spec's; see lingers).
	busyLingerDuration = 20 * time.Millisecond
	// busyRemoteLingerDuration is busyLingerDuration for a destination on
	// another node, where a commit costs an RPC as well as the owner's
	// fsync. Still below the spec's own linger cap (lingerMaxDuration).
	busyRemoteLingerDuration = 40 * time.Millisecond
	// busyLatencyMinDuration: the busy linger applies only to an owner
	// whose commits seldom take less than this (a node short of CPU or
	// disk; ownerLatency); otherwise commits go as the spec's linger
	// allows.
	busyLatencyMinDuration = 4 * time.Millisecond
	// busyWindowCommits: the busy linger judges an owner by up to this
	// many of its recent commits, none of the first this many
	// (ownerLatency).
	busyWindowCommits = 32
	// busyFastMinCount: an owner with at least this many commits under
	// busyLatencyMinDuration in its window (a quarter) is not busy.
	busyFastMinCount = busyWindowCommits / 4
	// busyRejudgeInterval: an owner's window starts again at every
	// multiple of this on the wall clock, measured without the busy
	// linger until it shows the owner busy again (ownerLatency).
	busyRejudgeInterval = time.Second
	// commitBudgetBytes bounds the encoded records of one commit (half the
	// 16 MiB node-RPC frame); a commit always carries at least one record.
	commitBudgetBytes = 8 << 20
	// commitGroupMaxCount bounds the destinations whose batches leave in
	// one commit call to a remote owner (PeerCommitter.CommitBatches).
	commitGroupMaxCount = 64
	// A landed batch's array of spareQueueMinRecords to spareQueueMaxRecords
	// entries is kept for a queue to grow into, up to spareQueuesMaxCount
	// of them (at 112 bytes an entry, under 1 MiB held at most).
	spareQueueMinRecords = 16
	spareQueueMaxRecords = 1024
	spareQueuesMaxCount  = 8

	// commitMaxRecords bounds the records of one commit.
	commitMaxRecords = 4096
	// recordOverheadBytes is what a record adds to a commit beyond its key
	// and payload (lengths and commit time), for the byte budget.
	recordOverheadBytes = 16
	// commitTimeout / probeTimeout bound one commit, and one probe of a
	// failing destination.
	commitTimeout = 30 * time.Second
	probeTimeout  = 5 * time.Second
	// hungAfterDuration: a commit in flight this long stops counting against
	// commitsInFlightMaxCount and returns what queued behind it to the WAL.
	hungAfterDuration = time.Second
	// failureBackoffDuration: a failing destination retries its probe this
	// often; a WAL read or checkpoint-store failure pauses the dispatcher
	// this long.
	failureBackoffDuration = time.Second
	// rerouteGraceDuration: a destination whose commits have failed this
	// long, from the start of the first failed attempt, or whose commit in
	// flight has hung this long from its start (an owner cut off the
	// network), sends its records to a sibling partition (internals.md
	// §3.3, §3.4; issue 15); at once when its owner is marked dead.
	rerouteGraceDuration = 3 * time.Second
	// resolveRetryInterval: an unassigned partition is looked up again this
	// often.
	resolveRetryInterval = 10 * time.Millisecond
	// rescanInterval: skipped records are re-read at least this often.
	rescanInterval = time.Second
	// confirmMemoDuration: an unconfirmed discard is not asked again for
	// this long.
	confirmMemoDuration = time.Second
	// drainTimeout bounds the final drain after Run's context ends.
	drainTimeout = 5 * time.Second
	// latencyWeightPercent is the weight of a new sample in an owner's
	// moving average of commit latency.
	latencyWeightPercent = 20
)

// Releaser of scheduled records (ours, api-extensions.md "Per-message
// delay").
const (
	// releaseBatchMaxRecords caps the records one release commits (one
	// fsync of the partition log).
	releaseBatchMaxRecords = 1000
	// releaseRescanInterval: the releaser looks again at least this often,
	// so a partition it came to own without a schedule change is served.
	releaseRescanInterval = 10 * time.Second
	// releaseRetryDelay: a partition whose release failed (frozen by a
	// move, a log error) waits this long before the next try.
	releaseRetryDelay = time.Second
)
