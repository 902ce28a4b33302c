package quicpeer

import (
	"fmt"

	"github.com/narad/narad/ports"
)

// CommitProduceBatches (op 37) request and reply body. Part of the wire
// format and must never change:
//
//	request:    count u32 | count × (batch bytes)
//	reply body: count u32 | count × (item bytes)
//
// Each batch is exactly a CommitProduceBatch (op 11) request payload
// (commit_codec.go). Each item answers the batch of the same index and is
// exactly the whole reply op 11 would have answered for it alone:
// status u16 | code string | detail string | body bytes (status.go), the
// body of a success holding the first offset i64. The reply body travels
// inside the usual success reply; a request that does not decode is
// refused whole (400 bad_payload) and nothing of it is committed. count is
// at least 1 and at most commitGroupMaxCount, in the request and the reply
// alike.

// appendCommitGroup encodes reqs as one op-37 request.
func appendCommitGroup(b []byte, reqs []ports.CommitRequest) []byte {
	b = appendU32(b, uint32(len(reqs)))
	for _, req := range reqs {
		b = appendU32(b, uint32(commitRequestSize(req)))
		b = appendCommitRequest(b, req)
	}
	return b
}

// commitGroupItemSize is what req adds to an op-37 request: its length and
// its op-11 payload.
func commitGroupItemSize(req ports.CommitRequest) int {
	return 4 + commitRequestSize(req)
}

// commitGroupSize is the exact encoded size of the op-37 request of reqs.
func commitGroupSize(reqs []ports.CommitRequest) int {
	n := commitGroupCountBytes
	for _, req := range reqs {
		n += commitGroupItemSize(req)
	}
	return n
}

// decodeCommitGroup decodes an op-37 request. Errors wrap ErrBadPayload:
// no batch, more than commitGroupMaxCount or than p can hold, truncation,
// trailing bytes, or any batch op 11 would refuse to decode. Keys and
// payloads of the decoded batches alias p.
func decodeCommitGroup(p []byte) ([]ports.CommitRequest, error) {
	items, err := decodeByteList(p, "commit group", commitGroupItemMinBytes)
	if err != nil {
		return nil, fmt.Errorf("decode commit group: %w", err)
	}
	reqs := make([]ports.CommitRequest, len(items))
	for i, item := range items {
		if reqs[i], err = decodeCommitRequest(item); err != nil {
			return nil, fmt.Errorf("decode commit group: batch %d of %d: %w", i, len(items), err)
		}
	}
	return reqs, nil
}

// appendCommitGroupReply encodes the items of an op-37 reply body, each a
// whole op-11 reply.
func appendCommitGroupReply(b []byte, items [][]byte) []byte {
	b = appendU32(b, uint32(len(items)))
	for _, item := range items {
		b = appendBytes(b, item)
	}
	return b
}

// decodeCommitGroupReply decodes an op-37 reply body into its items, each
// aliasing body and still to be read as an op-11 reply. Errors wrap
// ErrBadPayload.
func decodeCommitGroupReply(body []byte) ([][]byte, error) {
	items, err := decodeByteList(body, "commit group reply", commitGroupReplyItemMinBytes)
	if err != nil {
		return nil, fmt.Errorf("decode commit group reply: %w", err)
	}
	return items, nil
}

// decodeByteList decodes count u32 | count × bytes with 1 to
// commitGroupMaxCount items of at least minBytes each (length included),
// checked before the list is allocated. An empty item is nil.
func decodeByteList(p []byte, what string, minBytes int) ([][]byte, error) {
	r := reader{b: p}
	n := r.count(what+" count", minBytes, commitGroupMaxCount)
	if r.err == nil && n == 0 {
		r.fail("%s of no items", what)
	}
	items := make([][]byte, n)
	for i := 0; i < n && r.err == nil; i++ {
		items[i] = r.bytes(what + " item")
	}
	if err := r.end(what); err != nil {
		return nil, err
	}
	return items, nil
}

// commitReply is the whole reply op 11 answers for one batch: its first
// offset, or the owner's refusal.
func commitReply(first int64, err error) []byte {
	if err != nil {
		return errReply(err)
	}
	return okReply(commitReplyBody(first))
}

// commitItemOutcome reads one item of an op-37 reply exactly as
// CommitBatch reads an op-11 reply from node: the same decoding, the same
// errors (naming op 11, whose reply the item is).
func commitItemOutcome(item []byte, node string) ports.CommitOutcome {
	rp, err := readReply(item, node, OpCommitProduceBatch)
	if err != nil {
		return ports.CommitOutcome{Err: err}
	}
	body, err := rp.result(node, OpCommitProduceBatch)
	if err != nil {
		return ports.CommitOutcome{Err: err}
	}
	first, err := commitFirst(body, node)
	return ports.CommitOutcome{First: first, Err: err}
}
