// Package fanout is the fan-out engine (internals.md §6): it copies every
// record committed to a parent topic into each attached local child, from
// the link's attach point on, at least once.
//
// One cursor runs per (parent partition, child) on the node that owns the
// parent partition, so slab reads hit local disk and the cursor file lives
// beside the log it tails. The Engine's reconciler compares the desired
// cursors (links × parent partitions this node owns) with the running ones
// every second, once the replica is caught up and the ownership latch is
// set; it never runs two cursors over one file, and now and then sweeps
// cursor files whose link the leader confirms dissolved.
//
// A cursor reads a slab from its parent partition (never past the high
// watermark), re-keys it into buckets per child partition (a keyed record
// by FNV-1a of its key, a keyless one onto the parent's partition index
// when the counts match, else round-robin), commits the buckets to the
// child partitions' owners, and only when every bucket is acknowledged
// persists its position. A failing child partition stalls its bucket
// alone; records are never rerouted to a sibling partition. A delay child
// receives a record no earlier than its parent commit time plus the delay.
//
// LagReader reads where the cursors of this node's parent partitions stand
// (a running cursor from memory, else its file, only at the child's current
// epoch): the children listing's local half and the owner side of node RPC
// op 17, FanoutCursors.
//
// It orchestrates ports only: it never opens a file or a socket. Its one
// destructive act, anchoring a cursor at its start offset, and the removal
// of a cursor file both wait for the Raft leader's confirmation
// (application/leaderconfirm). Remote children (links with a remote) are
// not its business.
package fanout
