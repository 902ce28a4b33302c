package redrive

import "time"

const (
	// scanInterval is how often the runner looks for jobs to start or stop
	// (leadership is not an applied entry, so it is polled).
	scanInterval = time.Second
	// saveInterval is how often a running job writes its counts; a leader
	// lost in between leaves at most this much progress uncounted (the
	// letters themselves are moved or still in the dead-letter topic).
	saveInterval = 5 * time.Second
	// leaseWait is the long-poll of each consume; one that brings nothing
	// ends the job as done.
	leaseWait = 2 * time.Second
	// retryDelay is the pause after a transient failure (no quorum, an owner
	// down, a node shutting down) before the job tries again.
	retryDelay = time.Second
	// produceChunkBytes bounds the estimated bytes of one produce, well
	// under a batch produce's 16 MiB.
	produceChunkBytes = 8 << 20
)
