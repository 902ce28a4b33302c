package controller

import "time"

// Cluster constants (internals Appendix A, "Cluster" and "Metastore" rows).
const (
	// controllerPassInterval is the leader's reconcile tick.
	controllerPassInterval = 10 * time.Second
	// leadershipCheckInterval is how often a non-leading controller looks
	// for a promotion (and retries a term whose first barrier failed).
	leadershipCheckInterval = 5 * time.Second
	// membershipWatchInterval is the leader's forming-cluster watch.
	membershipWatchInterval = 250 * time.Millisecond
	// arrivalSettleDuration: after a member turns alive, the watch sweeps
	// once every voter is alive or this long after the latest arrival.
	arrivalSettleDuration = time.Second
	// memberDeadAfterDuration is the silence after which a member is dead;
	// it is also the election grace each term waits before any dead mark.
	memberDeadAfterDuration = 30 * time.Second
	// orphanPruneEveryPasses: orphan rows are pruned on the first pass of a
	// term and on every 6th pass after it (about a minute).
	orphanPruneEveryPasses = 6
	// settledMaxInterval bounds how long a settled sweep or prune (views
	// unmoved since a clean one) is skipped: the backstop against a view
	// change the counters did not see.
	settledMaxInterval = 5 * time.Minute
	// placementWatchBufferCount is how many applied entries the leader's
	// placement watch may queue before its subscription lags and is renewed.
	placementWatchBufferCount = 256
	// deadTargetAbortAfterDuration: the leader clears a move whose
	// destination has been silent this long (internals.md §11.2, §11.8).
	deadTargetAbortAfterDuration = 2 * time.Minute
	// retireStatusTimeout bounds the NodeStatus call that checks a drained
	// member's dispatch backlog (the node RPC's default reply timeout).
	retireStatusTimeout = 5 * time.Second
	// barrierTimeout bounds one barrier (the metastore's 5 s).
	barrierTimeout = 5 * time.Second

	// heartbeatInterval is every node's heartbeat cadence.
	heartbeatInterval = 5 * time.Second
	// registrationRetryInterval is the cadence of registration attempts
	// until the first one succeeds.
	registrationRetryInterval = 250 * time.Millisecond
)
