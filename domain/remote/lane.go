package remote

import "github.com/narad/narad/domain"

// FNV-32a parameters.
const (
	fnv32Offset = 2166136261
	fnv32Prime  = 16777619
)

// Lane is the lane of a record among lanes (internals.md §7.2 "Lanes"): a
// keyed record by FNV-32a of its key, a keyless one (empty key) by its
// parent offset, so one key never spans lanes. lanes ≤ 1 means one lane, 0.
func Lane(key []byte, offset int64, lanes int) int {
	if lanes <= 1 {
		return 0
	}
	if len(key) == 0 {
		lane := offset % int64(lanes)
		if lane < 0 {
			lane += int64(lanes)
		}
		return int(lane)
	}
	h := uint32(fnv32Offset)
	for _, c := range key {
		h ^= uint32(c)
		h *= fnv32Prime
	}
	return int(h % uint32(lanes))
}

// SplitLanes divides a slab into lanes: for each lane, the indexes into
// recs of its records in slab order (ascending). lanes ≤ 1 gives one lane
// holding every record.
func SplitLanes(recs []domain.Record, lanes int) [][]int {
	if lanes < 1 {
		lanes = 1
	}
	out := make([][]int, lanes)
	for i, r := range recs {
		l := Lane(r.Key, r.Offset, lanes)
		out[l] = append(out[l], i)
	}
	return out
}

// SlabLen is how many leading records of recs (in parent order) make one
// slab: it stops before the first record that would take its lane past
// SlabMaxRecordsPerLane records or SlabMaxBytesPerLane key and payload
// bytes (internals.md §7.2 "Commit and advance"). The first record of a
// lane always fits, so a non-empty recs gives at least 1.
func SlabLen(recs []domain.Record, lanes int) int {
	if lanes < 1 {
		lanes = 1
	}
	var countOf, bytesOf [16]int // the spec allows 8 lanes
	count, bytes := countOf[:], bytesOf[:]
	if lanes > len(count) {
		count, bytes = make([]int, lanes), make([]int, lanes)
	}
	for i, r := range recs {
		l := Lane(r.Key, r.Offset, lanes)
		size := len(r.Key) + len(r.Payload)
		if count[l] > 0 && (count[l] == SlabMaxRecordsPerLane || bytes[l]+size > SlabMaxBytesPerLane) {
			return i
		}
		count[l]++
		bytes[l] += size
	}
	return len(recs)
}
