package quicpeer

import (
	"context"
	"fmt"

	"github.com/narad/narad/ports"
)

// CommitScheduled (op 40) request, this node's extension for per-message
// delays. Part of the wire format and must never change:
//
//	records u32 | records × deliver_at_ms i64 | <op 11 request>
//
// A deliver-at of 0 marks a record due at once. Its own op, not a field on
// op 11, so that an owner of an older release refuses the batch (unsupported
// operation) rather than committing scheduled records early; the records
// then stay in the sender's ingress log and are retried.

// scheduled reports whether req holds a scheduled record.
func scheduled(req ports.CommitRequest) bool {
	for _, r := range req.Records {
		if r.DeliverAtMs > 0 {
			return true
		}
	}
	return false
}

// appendCommitScheduled encodes req as an op-40 request.
func appendCommitScheduled(b []byte, req ports.CommitRequest) []byte {
	b = appendU32(b, uint32(len(req.Records)))
	for _, r := range req.Records {
		b = appendI64(b, r.DeliverAtMs)
	}
	return appendCommitRequest(b, req)
}

// decodeCommitScheduled decodes an op-40 request. Errors wrap ErrBadPayload:
// those of op 11's decoder, a negative deliver-at, or a deliver-at count
// other than the batch's record count.
func decodeCommitScheduled(p []byte) (ports.CommitRequest, error) {
	r := reader{b: p}
	n := r.count("deliver-at count", 8, commitRecordsMaxCount)
	ats := make([]int64, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		at := r.i64("deliver_at_ms")
		if at < 0 {
			r.fail("record %d: negative deliver_at_ms", i)
		}
		ats = append(ats, at)
	}
	if r.err != nil {
		return ports.CommitRequest{}, fmt.Errorf("decode scheduled commit: %w", r.err)
	}
	req, err := decodeCommitRequest(r.b)
	if err != nil {
		return ports.CommitRequest{}, err
	}
	if len(req.Records) != n {
		return ports.CommitRequest{}, fmt.Errorf("decode scheduled commit: %d deliver-ats for %d records: %w", n, len(req.Records), ErrBadPayload)
	}
	for i := range req.Records {
		req.Records[i].DeliverAtMs = ats[i]
	}
	return req, nil
}

// commitScheduled sends req to node as op 40.
func (p *Peers) commitScheduled(ctx context.Context, node string, req ports.CommitRequest) (int64, error) {
	payload := appendCommitScheduled(make([]byte, 0, 4+8*len(req.Records)+commitRequestSize(req)), req)
	body, err := p.call(ctx, node, OpCommitScheduled, payload)
	if err != nil {
		return 0, err
	}
	return commitFirst(body, node)
}

// registerCommitScheduled serves CommitScheduled (op 40) with c.
func registerCommitScheduled(srv *Server, c Committer) {
	srv.Handle(OpCommitScheduled, func(ctx context.Context, p []byte) ([]byte, error) {
		req, err := decodeCommitScheduled(p)
		if err != nil {
			return errReply(err), nil
		}
		return commitReply(c.CommitBatch(ctx, req)), nil
	})
}
