// Package controller holds the metadata leader's duties (internals §8.7,
// §9.4): the assignment sweep that places every unowned partition
// (insert-only, never moving an owned one), dead marking of silent members
// (after the per-term election grace, as a heartbeat-carrying CAS, behind
// the voter-quorum breaker), the pruning of orphan assignment rows, and the
// membership watch of a forming cluster. It also holds every node's
// Heartbeater, which keeps this node's member record alive.
//
// The Controller acts only while this node leads the metadata shard and only
// after a Barrier (then a re-read): a failed barrier skips the pass. It never
// decides from state it has not confirmed, never marks a member dead from a
// stale heartbeat, and never does I/O except through its ports.
package controller
