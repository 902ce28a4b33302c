// Package membership is the admission use case of the metadata Raft shard:
// the leader decides whether a joining node enters as a voter (while the
// shard has fewer voters than its target, 3 or 5) or is staged as a
// non-voter, promotes staged nodes when room opens, refuses ids removed for
// good, and refuses a new node on an older release than the cluster (the
// join half of the entry-type gate, internals §8.3). It drives
// ports.MetadataMembership and never touches Raft or the network itself;
// the join request transport (node RPC) calls it.
package membership
