package quicpeer

import (
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// CommitProduceBatch (op 11) request, internals.md §3.7. Part of the wire
// format and must never change:
//
//	topic string | partition i32 | records u32 |
//	records × (key bytes | payload bytes | committed_at_ms i64) |
//	[ runs u32 | runs × (records u32 | topic_id string) ]
//
// The trailing run section is written only when the batch carries a topic
// id; this node writes one run covering every record. The decoder accepts
// several runs only when they share one id and cover the batch exactly.
// Keys and payloads of a decoded request alias the payload.

// recordWireMinBytes is the smallest encoded record: two empty byte
// strings and the commit time.
const recordWireMinBytes = 4 + 4 + 8

// runWireMinBytes is the smallest encoded run: a count and an empty id.
const runWireMinBytes = 4 + 4

// appendCommitRequest encodes req.
func appendCommitRequest(b []byte, req ports.CommitRequest) []byte {
	b = appendString(b, req.Topic)
	b = appendI32(b, req.Partition)
	b = appendU32(b, uint32(len(req.Records)))
	for _, rec := range req.Records {
		b = appendBytes(b, rec.Key)
		b = appendBytes(b, rec.Payload)
		b = appendI64(b, rec.CommittedAtMs)
	}
	if req.TopicID == "" {
		return b
	}
	b = appendU32(b, 1)
	b = appendU32(b, uint32(len(req.Records)))
	return appendString(b, string(req.TopicID))
}

// commitRequestSize is the exact encoded size of req.
func commitRequestSize(req ports.CommitRequest) int {
	n := 4 + len(req.Topic) + 4 + 4
	for _, rec := range req.Records {
		n += recordWireMinBytes + len(rec.Key) + len(rec.Payload)
	}
	if req.TopicID != "" {
		n += 4 + 4 + 4 + len(req.TopicID)
	}
	return n
}

// decodeCommitRequest decodes p. Errors wrap ErrBadPayload: truncation,
// trailing bytes, a record count above commitRecordsMaxCount or above what
// p can hold, runs that do not cover the batch or disagree on the id.
func decodeCommitRequest(p []byte) (ports.CommitRequest, error) {
	r := reader{b: p}
	req := ports.CommitRequest{Topic: r.string("topic", wireNameMaxBytes), Partition: r.i32("partition")}
	n := r.count("record count", recordWireMinBytes, commitRecordsMaxCount)
	if r.err == nil {
		req.Records = make([]domain.Record, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		req.Records[i] = domain.Record{Key: r.bytes("key"), Payload: r.bytes("payload"), CommittedAtMs: r.i64("committed_at_ms")}
	}
	if r.err == nil && len(r.b) > 0 {
		req.TopicID = decodeRuns(&r, n)
	}
	if err := r.end("commit request"); err != nil {
		return ports.CommitRequest{}, fmt.Errorf("decode commit batch: %w", err)
	}
	return req, nil
}

// decodeRuns reads the trailing incarnation section of a batch of n records.
func decodeRuns(r *reader, n int) domain.TopicID {
	runs := r.count("run count", runWireMinBytes, commitRunsMaxCount)
	if r.err == nil && runs == 0 {
		r.fail("run section with no runs")
	}
	var id string
	covered := 0
	for i := 0; i < runs && r.err == nil; i++ {
		covered += int(r.u32("run record count"))
		runID := r.string("run topic id", wireNameMaxBytes)
		switch {
		case runID == "":
			r.fail("run %d without a topic id", i)
		case i > 0 && runID != id:
			r.fail("runs of incarnations %s and %s in one batch", id, runID)
		}
		id = runID
	}
	if r.err == nil && covered != n {
		r.fail("runs cover %d records of %d", covered, n)
	}
	return domain.TopicID(id)
}

// appendCommitReply encodes a commit's first offset as a success body.
func commitReplyBody(first int64) []byte { return appendI64(make([]byte, 0, 8), first) }

// decodeCommitReplyBody decodes a success body.
func decodeCommitReplyBody(body []byte) (int64, error) {
	r := reader{b: body}
	first := r.i64("first offset")
	return first, r.end("commit reply")
}

// commitFirst reads a commit's success body from node: its first offset.
func commitFirst(body []byte, node string) (int64, error) {
	first, err := decodeCommitReplyBody(body)
	if err != nil {
		return 0, unreadableReply("commit", node, err)
	}
	return first, nil
}
