package domain

// FNV-1a 32-bit parameters (the partitioner's hash; part of the wire
// contract: clients may predict where a key lands).
const (
	fnv32Offset uint32 = 2166136261
	fnv32Prime  uint32 = 16777619
)

// KeyPartition maps a non-empty key to a partition in [0, partitions) with a
// 32-bit FNV-1a hash. partitions must be positive.
func KeyPartition(key []byte, partitions int) int32 {
	h := fnv32Offset
	for _, c := range key {
		h ^= uint32(c)
		h *= fnv32Prime
	}
	return int32(h % uint32(partitions))
}
