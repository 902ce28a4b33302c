package quicpeer

// ConsumerFrontiers (op 38) payloads: a remote child attached `from:
// unconsumed` starts each parent partition at its consumers' frontier
// (api.md §2.10.2, internals.md §7.1), read on the partition's owner. Part
// of the wire format and must never change:
//
//	request:    op 8's (partsRequest): topic string | topic_id string | parts u32 | parts × partition i32
//	reply body: entries u32 | entries × unconsumed i64
//
// An empty topic_id asks for the live incarnation. The reply holds one
// entry per requested partition, in the request's order: the first offset
// the partition's consumers have not settled (their committed frontier +
// 1, 0 when none was ever settled), never negative.

// frontiersPartitionsMaxCount caps the partitions of one request and the
// entries of its reply (a topic has at most 4,096 partitions). Part of the
// wire format: a decoder refuses a count above it before allocating.
const frontiersPartitionsMaxCount = statsPartitionsMaxCount // the request is op 8's

// frontierEntryWireBytes is one encoded reply entry: an i64 offset.
const frontierEntryWireBytes = 8

// appendFrontiersReplyBody encodes the entries of a success.
func appendFrontiersReplyBody(b []byte, offsets []int64) []byte {
	b = appendU32(b, uint32(len(offsets)))
	for _, o := range offsets {
		b = appendI64(b, o)
	}
	return b
}

// frontiersReplyBodySize is the exact encoded size of a success body.
func frontiersReplyBodySize(offsets []int64) int {
	return 4 + frontierEntryWireBytes*len(offsets)
}

// decodeFrontiersReplyBody decodes a success body. Errors wrap
// ErrBadPayload: truncation, trailing bytes, a count above the cap or above
// what body can hold, a negative offset.
func decodeFrontiersReplyBody(body []byte) ([]int64, error) {
	r := reader{b: body}
	n := r.count("frontier entry count", frontierEntryWireBytes, frontiersPartitionsMaxCount)
	var out []int64
	if r.err == nil {
		out = make([]int64, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		if out[i] = r.i64("unconsumed offset"); out[i] < 0 {
			r.fail("unconsumed offset %d of entry %d", out[i], i)
		}
	}
	if err := r.end("consumer frontiers reply"); err != nil {
		return nil, err
	}
	return out, nil
}
