// Package orphans reclaims topic directories of deleted incarnations, each
// only after the Raft leader confirms that incarnation is gone (internals.md
// §8.6, §9.8):
//
//   - the Sweeper is the startup orphan sweep: directories left on disk by
//     deleted incarnations (a purge missed while the node was down, a
//     quarantine set aside at open);
//   - the Purger is the delete flow's purge on every node: it follows the
//     applied metadata entries and removes this node's directories of each
//     deleted incarnation, judging every directory again after a snapshot
//     restore or a lagged watch.
//
// Anything the leader cannot confirm is kept and asked about again later.
// Neither ever touches a directory stamped with the live incarnation.
package orphans
