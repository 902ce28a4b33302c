package quicpeer

import (
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// TopicPartitionStats (op 8) payloads, internals.md §6.3, §6.6. Part of the
// wire format and must never change:
//
//	request:    topic string | topic_id string | parts u32 | parts × partition i32
//	reply body: entries u32 | entries × (segments i64 | size_bytes i64 |
//	            oldest_offset i64 | next_offset i64 | high_watermark i64 |
//	            oldest_segment_at i64)
//
// An empty topic_id asks for the live incarnation. The reply holds one
// entry per requested partition, in the request's order.
// oldest_segment_at is Unix nanoseconds, 0 when unknown (the zero time).

// statsEntryWireBytes is one encoded entry: six 64-bit integers.
const statsEntryWireBytes = 6 * 8

// partitionWireBytes is one encoded partition index.
const partitionWireBytes = 4

// partsRequest is a decoded request naming partitions of one topic
// incarnation: op 8's, and op 38's in the same layout.
type partsRequest struct {
	topic string
	id    domain.TopicID
	parts []int32
}

// appendPartsRequest encodes a request for parts of topic's incarnation id.
func appendPartsRequest(b []byte, topic string, id domain.TopicID, parts []int32) []byte {
	b = appendString(b, topic)
	b = appendString(b, string(id))
	b = appendU32(b, uint32(len(parts)))
	for _, p := range parts {
		b = appendI32(b, p)
	}
	return b
}

// partsRequestSize is the exact encoded size of a request.
func partsRequestSize(topic string, id domain.TopicID, parts []int32) int {
	return 4 + len(topic) + 4 + len(id) + 4 + partitionWireBytes*len(parts)
}

// decodePartsRequest decodes p. Errors wrap ErrBadPayload: truncation,
// trailing bytes, a partition count above statsPartitionsMaxCount or above
// what p can hold.
func decodePartsRequest(p []byte) (partsRequest, error) {
	r := reader{b: p}
	req := partsRequest{topic: r.string("topic", wireNameMaxBytes), id: domain.TopicID(r.string("topic id", wireNameMaxBytes))}
	n := r.count("partition count", partitionWireBytes, statsPartitionsMaxCount)
	if r.err == nil {
		req.parts = make([]int32, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		req.parts[i] = r.i32("partition")
	}
	if err := r.end("partitions request"); err != nil {
		return partsRequest{}, err
	}
	return req, nil
}

// appendStatsReplyBody encodes the entries of a success.
func appendStatsReplyBody(b []byte, stats []ports.LogStats) []byte {
	b = appendU32(b, uint32(len(stats)))
	for _, st := range stats {
		b = appendI64(b, int64(st.Segments))
		b = appendI64(b, st.SizeBytes)
		b = appendI64(b, st.OldestOffset)
		b = appendI64(b, st.NextOffset)
		b = appendI64(b, st.HighWatermark)
		b = appendI64(b, unixNanos(st.OldestSegmentAt))
	}
	return b
}

// decodeStatsReplyBody decodes a success body. Errors wrap ErrBadPayload.
func decodeStatsReplyBody(body []byte) ([]ports.LogStats, error) {
	r := reader{b: body}
	n := r.count("stats entry count", statsEntryWireBytes, statsPartitionsMaxCount)
	var out []ports.LogStats
	if r.err == nil {
		out = make([]ports.LogStats, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		out[i] = ports.LogStats{
			Segments: int(r.i64("segments")), SizeBytes: r.i64("size bytes"),
			OldestOffset: r.i64("oldest offset"), NextOffset: r.i64("next offset"),
			HighWatermark: r.i64("high watermark"), OldestSegmentAt: fromUnixNanos(r.i64("oldest segment at")),
		}
	}
	if err := r.end("partition stats reply"); err != nil {
		return nil, err
	}
	return out, nil
}

// unixNanos encodes t, 0 for the zero time.
func unixNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromUnixNanos decodes unixNanos's value (in UTC).
func fromUnixNanos(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}
