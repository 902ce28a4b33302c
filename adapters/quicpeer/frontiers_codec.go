package quicpeer

import "github.com/narad/narad/domain"

// ConsumerFrontiers (op 38) payloads: a remote child attached `from:
// unconsumed` starts each parent partition at its consumers' frontier
// (api.md §2.10.2, internals.md §7.1), read on the partition's owner. Part
// of the wire format and must never change:
//
//	request:    topic string | topic_id string | parts u32 | parts × partition i32
//	reply body: entries u32 | entries × unconsumed i64
//
// An empty topic_id asks for the live incarnation. The reply holds one
// entry per requested partition, in the request's order: the first offset
// the partition's consumers have not settled (their committed frontier +
// 1, 0 when none was ever settled), never negative.

// frontiersPartitionsMaxCount caps the partitions of one request and the
// entries of its reply (a topic has at most 4,096 partitions). Part of the
// wire format: a decoder refuses a count above it before allocating.
const frontiersPartitionsMaxCount = 65536

// frontierEntryWireBytes is one encoded reply entry: an i64 offset.
const frontierEntryWireBytes = 8

// frontiersRequest is a decoded op 38 request.
type frontiersRequest struct {
	topic string
	id    domain.TopicID
	parts []int32
}

// appendFrontiersRequest encodes a request for parts of topic's
// incarnation id.
func appendFrontiersRequest(b []byte, topic string, id domain.TopicID, parts []int32) []byte {
	b = appendString(b, topic)
	b = appendString(b, string(id))
	b = appendU32(b, uint32(len(parts)))
	for _, p := range parts {
		b = appendI32(b, p)
	}
	return b
}

// frontiersRequestSize is the exact encoded size of a request.
func frontiersRequestSize(topic string, id domain.TopicID, parts []int32) int {
	return 4 + len(topic) + 4 + len(id) + 4 + partitionWireBytes*len(parts)
}

// decodeFrontiersRequest decodes p. Errors wrap ErrBadPayload: truncation,
// trailing bytes, a name over its cap, a partition count above
// frontiersPartitionsMaxCount or above what p can hold.
func decodeFrontiersRequest(p []byte) (frontiersRequest, error) {
	r := reader{b: p}
	req := frontiersRequest{topic: r.string("topic", wireNameMaxBytes), id: domain.TopicID(r.string("topic id", wireNameMaxBytes))}
	n := r.count("partition count", partitionWireBytes, frontiersPartitionsMaxCount)
	if r.err == nil {
		req.parts = make([]int32, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		req.parts[i] = r.i32("partition")
	}
	if err := r.end("consumer frontiers request"); err != nil {
		return frontiersRequest{}, err
	}
	return req, nil
}

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
