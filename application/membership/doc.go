// Package membership is the admission use case of the metadata Raft shard:
// the leader stages every joining node as a non-voter, promotes a staged
// node that asks again while the shard has fewer voters than its target (3
// or 5) and its member record is alive and not draining, refuses ids
// removed for good (readmitting a tombstoned id whose join declares an
// empty data directory), and refuses a new node on an older release than
// the cluster (the join half of the entry-type gate, internals §8.3), and
// hands its leadership to another voter before answering a voter that ran
// before and rejoins from an empty data directory (§9.3). The
// joiner's side is here too: the join loop, and the empty-volume probe an
// initial member runs before its Raft starts (§9.2). It drives
// ports.MetadataMembership and ports.ClusterJoiner and never touches Raft
// or the network itself; the join request transport (node RPC) calls it.
package membership
