// Package membership is the admission use case of the metadata Raft shard:
// the leader decides whether a joining node enters as a voter (while the
// shard has fewer voters than its target, 3 or 5) or is staged as a
// non-voter, promotes staged nodes when room opens, and refuses ids removed
// for good. It drives ports.MetadataMembership and never touches Raft or the
// network itself; the join request transport (node RPC) calls it.
package membership
