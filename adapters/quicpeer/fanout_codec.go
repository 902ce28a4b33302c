package quicpeer

import (
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// FanoutCursors (op 17) payloads, api.md §2.11, internals.md §6.6. Part of
// the wire format and must never change:
//
//	request:    parent string | parent_id string | parts u32 | parts × partition i32 |
//	            children u32 | children × (child string | epoch string)
//	reply body: entries u32 | entries × (reported bool | next_offset i64 |
//	            high_watermark i64)
//
// An empty parent_id asks for the live incarnation. The reply holds one
// entry per (partition, child) pair, partitions outer and children inner:
// the entry of parts[i] and children[j] is number i × children + j.

// fanoutLagEntryWireBytes is one encoded reply entry: a bool and two
// 64-bit integers.
const fanoutLagEntryWireBytes = 1 + 8 + 8

// childEpochMinWireBytes is the smallest encoded child: two empty strings.
const childEpochMinWireBytes = 4 + 4

// fanoutLagRequest is a decoded op 17 request.
type fanoutLagRequest struct {
	parent   string
	parentID domain.TopicID
	parts    []int32
	children []ports.ChildEpoch
}

// appendFanoutLagRequest encodes a request.
func appendFanoutLagRequest(b []byte, req fanoutLagRequest) []byte {
	b = appendString(b, req.parent)
	b = appendString(b, string(req.parentID))
	b = appendU32(b, uint32(len(req.parts)))
	for _, p := range req.parts {
		b = appendI32(b, p)
	}
	b = appendU32(b, uint32(len(req.children)))
	for _, c := range req.children {
		b = appendString(b, c.Child)
		b = appendString(b, c.Epoch)
	}
	return b
}

// fanoutLagRequestSize is the exact encoded size of req.
func fanoutLagRequestSize(req fanoutLagRequest) int {
	n := 4 + len(req.parent) + 4 + len(req.parentID) + 4 + partitionWireBytes*len(req.parts) + 4
	for _, c := range req.children {
		n += childEpochMinWireBytes + len(c.Child) + len(c.Epoch)
	}
	return n
}

// decodeFanoutLagRequest decodes p. Errors wrap ErrBadPayload: truncation,
// trailing bytes, counts above their caps or above what p can hold, more
// pairs than fanoutPairsMaxCount.
func decodeFanoutLagRequest(p []byte) (fanoutLagRequest, error) {
	r := reader{b: p}
	req := fanoutLagRequest{
		parent:   r.string("parent", wireNameMaxBytes),
		parentID: domain.TopicID(r.string("parent id", wireNameMaxBytes)),
	}
	n := r.count("partition count", partitionWireBytes, fanoutPartitionsMaxCount)
	if r.err == nil {
		req.parts = make([]int32, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		req.parts[i] = r.i32("partition")
	}
	m := r.count("child count", childEpochMinWireBytes, fanoutChildrenMaxCount)
	if r.err == nil && n*m > fanoutPairsMaxCount {
		r.fail("%d partitions × %d children above %d pairs", n, m, fanoutPairsMaxCount)
	}
	if r.err == nil {
		req.children = make([]ports.ChildEpoch, m)
	}
	for i := 0; i < m && r.err == nil; i++ {
		req.children[i] = ports.ChildEpoch{Child: r.string("child", wireNameMaxBytes), Epoch: r.string("epoch", wireNameMaxBytes)}
	}
	if err := r.end("fanout cursors request"); err != nil {
		return fanoutLagRequest{}, err
	}
	return req, nil
}

// appendFanoutLagReplyBody encodes the entries of a success.
func appendFanoutLagReplyBody(b []byte, lags []ports.CursorLag) []byte {
	b = appendU32(b, uint32(len(lags)))
	for _, l := range lags {
		b = appendBool(b, l.Reported)
		b = appendI64(b, l.NextOffset)
		b = appendI64(b, l.HighWatermark)
	}
	return b
}

// decodeFanoutLagReplyBody decodes a success body. Errors wrap
// ErrBadPayload.
func decodeFanoutLagReplyBody(body []byte) ([]ports.CursorLag, error) {
	r := reader{b: body}
	n := r.count("fanout cursor entry count", fanoutLagEntryWireBytes, fanoutPairsMaxCount)
	var out []ports.CursorLag
	if r.err == nil {
		out = make([]ports.CursorLag, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		out[i] = ports.CursorLag{Reported: r.bool("reported"), NextOffset: r.i64("next offset"), HighWatermark: r.i64("high watermark")}
	}
	if err := r.end("fanout cursors reply"); err != nil {
		return nil, err
	}
	return out, nil
}
