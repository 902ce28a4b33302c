package membership

import "time"

// Voter targets: a cluster grows to 3 voters by default, 5 when configured.
const (
	DefaultMaxVoters = 3
	LargeMaxVoters   = 5
)

// promotionLeaderTenureMin: the leader promotes a staged node only once it
// has led this long (internals §9.3: a heartbeat to a packet-dropping node
// fails only after the Raft transport's 10 s dial timeout).
const promotionLeaderTenureMin = 12 * time.Second

// promotionLinkFailureWindow: a failed Raft connection to a joiner blocks its
// promotion this long, unless a later connection succeeded (internals §9.3).
const promotionLinkFailureWindow = 12 * time.Second

// handOverWaitMax bounds the wait for a leadership hand-over before the
// leader answers a voter that rejoined with an empty data directory
// (handover.go); the answer goes out "voter" either way. Raft gives up a
// transfer after one election timeout (500 ms at the default tick), and
// the bound stays under the probe's 2 s per peer so the answer reaches it.
const handOverWaitMax = 1500 * time.Millisecond

// Join loop (internals §9.3, §10.3 "join every 2 s").
const (
	// joinRetryInterval paces the join loop's attempts.
	joinRetryInterval = 2 * time.Second
	// joinCallTimeout bounds one JoinCluster call (the node RPC reply
	// default); a lost answer is simply asked again.
	joinCallTimeout = 5 * time.Second
	// joinHintsPerAttemptMax is how many 421 leader hints one attempt follows.
	joinHintsPerAttemptMax = 4
	// joinLeadersRememberedMax is how many leader addresses the loop keeps,
	// most recent first.
	joinLeadersRememberedMax = 8
	// joinHintAddrMaxBytes bounds a hint's host:port (a 253-byte DNS name,
	// a colon, a 5-digit port... with brackets for IPv6).
	joinHintAddrMaxBytes = 261
	// leaderlessJoinAfter: a node that has seen no leader this long runs
	// the join loop, initial member or not.
	leaderlessJoinAfter = 15 * time.Second
	// leaderCheckInterval paces the leaderless watch.
	leaderCheckInterval = 1 * time.Second
	// joinFailureLogEvery: a failing loop logs its first failure and then
	// one in this many (about once a minute at 2 s).
	joinFailureLogEvery = 30
)

// Empty-volume probe (internals §9.2): an initial member starting with no
// Raft state first asks its peers whether a cluster exists.
const (
	// probeRounds is how many times the probe asks every peer.
	probeRounds = 3
	// probeRoundPause separates two rounds.
	probeRoundPause = 1 * time.Second
	// probePeerTimeout bounds one peer's answer within a round.
	probePeerTimeout = 2 * time.Second
)
