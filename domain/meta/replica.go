package meta

import "hash/fnv"

// ReplicaID maps a node id to its Raft replica id: FNV-1a 64 of the id,
// never 0 (Raft reserves 0). Every node computes the same mapping, so the
// join path and the membership views agree without a lookup table. Two node
// ids colliding is a configuration error the join use case refuses.
func ReplicaID(nodeID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(nodeID))
	if id := h.Sum64(); id != 0 {
		return id
	}
	return 1
}
