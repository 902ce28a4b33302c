package metastore

import "time"

// Constants from the spec (internals §8, appendix A) and the dragonboat
// mapping. Units are in the names.
const (
	// metadataShardID is the Raft shard holding every metadata entry.
	metadataShardID uint64 = 1

	// writeTimeout bounds one proposal (the spec's Raft write timeout).
	writeTimeout = 5 * time.Second
	// barrierTimeout bounds one linearizable read.
	barrierTimeout = 5 * time.Second
	// leaderContactMax is how old the last successful read probe may be for
	// the replica to count as caught up.
	leaderContactMax = 5 * time.Second
	// readAttemptTimeout bounds one ReadIndex attempt inside a barrier;
	// retryPause separates attempts (and re-proposals of dropped entries).
	readAttemptTimeout = time.Second
	retryPause         = 50 * time.Millisecond
	// openTimeout bounds the wait for the state machine to open at start.
	openTimeout = time.Minute
	// probeInterval is the cadence of the caught-up read probe.
	probeInterval = time.Second
	// membershipTimeout bounds one Raft configuration change.
	membershipTimeout = 10 * time.Second
	// leaderPollInterval paces the wait for a leadership hand-over.
	leaderPollInterval = 10 * time.Millisecond

	// snapshotEntries: Raft compacts once this many entries accumulated.
	snapshotEntries uint64 = 8192
	// compactionOverheadEntries: entries kept behind a compaction point.
	compactionOverheadEntries uint64 = 1024
	// electionRTTTicks and heartbeatRTTTicks count RTTs (dragonboat ticks):
	// an election after 10 ticks of silence (500 ms at the default RTT), a
	// leader heartbeat every 2 (100 ms), so a follower still hears five
	// before it would stand, and the leader's quorum check (CheckQuorum,
	// once per election timeout) five replies from each. A heartbeat every
	// tick doubled the idle cluster's Raft traffic for no earlier failover:
	// three idle nodes spent about 19 ms of CPU a second more
	// (docs/performance.md "What an idle cluster spends on Raft").
	electionRTTTicks  uint64 = 10
	heartbeatRTTTicks uint64 = 2
	// defaultRTT is the tick length when the config leaves it unset.
	defaultRTT = 50 * time.Millisecond

	// logDBShards and the write buffers bound dragonboat's own log store
	// (4 shards × 4 buffers × 4 MiB = 64 MiB at most). Fixed once deployed.
	logDBShards            uint64 = 4
	logDBWriteBufferBytes  uint64 = 4 << 20
	logDBWriteBufferNumber uint64 = 4
	// engine worker counts: one metadata shard needs few workers. Fixed once
	// deployed.
	engineWorkers uint64 = 4

	// A batch commit the disk refuses is retried after diskRetryFirst,
	// doubling to diskRetryMax, for up to diskRetryBudget (internals §8.3).
	diskRetryFirst  = 100 * time.Millisecond
	diskRetryMax    = 5 * time.Second
	diskRetryBudget = 30 * time.Second

	// snapshotBatchBytes: a snapshot install commits a pebble batch at this
	// size, so memory stays bounded whatever the database size.
	snapshotBatchBytes = 4 << 20

	// clusterTLSName is the DNS SAN every node's Raft certificate carries
	// and every peer's is checked against (internals §12.3).
	clusterTLSName = "narad-cluster.local"
	// raftTLSHandshakeTimeout bounds one Raft connection's set-up on either
	// side: dial, TLS handshake and the accept preface.
	raftTLSHandshakeTimeout = 5 * time.Second
	// raftKeepAlivePeriod: TCP keep-alive on Raft connections, so a peer
	// that vanished without a FIN is noticed.
	raftKeepAlivePeriod = 10 * time.Second
	// raftFrameMaxBytes: the largest frame the TLS transport accepts
	// (dragonboat sends message batches of at most 64 MiB and snapshot
	// chunks of 2 MiB).
	raftFrameMaxBytes = 128 << 20
	// raftFrameBufferBytes: a connection keeps a buffer this large between
	// frames; larger frames get a buffer of their own.
	raftFrameBufferBytes = 2 << 20
	// A frame body must cross the connection within raftFrameIOBase plus one
	// second per raftFrameIOFloorBytesPerSecond.
	raftFrameIOBase                = 5 * time.Second
	raftFrameIOFloorBytesPerSecond = 256 << 10
	// raftAcceptRetryPause separates accept attempts after a transient
	// accept error (out of file descriptors).
	raftAcceptRetryPause = 100 * time.Millisecond
	// raftHandshakeLogEvery: per peer host, at most one failed-handshake log
	// line per interval (dragonboat redials every few ticks).
	raftHandshakeLogEvery = 10 * time.Second
)
