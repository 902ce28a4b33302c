// Package leaderconfirm is the one helper every destructive path calls before
// destroying data on the strength of metadata (orphan sweeps, dispatcher
// discards, cursor-file removal, cursor anchoring, stale-copy reclaim), and
// the ownership latch that gates ownership decisions until the replica has
// caught up once.
//
// A confirmation is a Barrier (a linearizable ReadIndex through the Raft
// leader: on the leader it waits for its own state machine to apply its
// log, on a follower it waits for the leader's commit index) followed by a
// re-read of the local views. Anything short of a definite "gone" keeps the
// data. It must never decide from local state without that barrier, and
// never do I/O itself.
package leaderconfirm
