package quicpeer

import (
	"context"
	"fmt"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ListPartitionSegments (op 22) and FetchSegmentChunk (op 23) payloads,
// internals.md §11.3. Part of the wire format and must never change:
//
//	op 22 request:    topic string | topic_id string | partition i32
//	op 22 reply body: high_watermark i64 | segments u32 |
//	                  segments × (name string | size i64) |
//	                  side u32 | side × (name string | size i64)
//	op 24 request:    topic string | topic_id string | partition i32 |
//	                  token string (empty: start a freeze)
//	op 24 reply body: token string | the op 22 reply body
//	op 23 request:    topic string | topic_id string | partition i32 |
//	                  name string | offset i64 | max u32 (1 to 1 MiB)
//	op 23 reply body: chunk bytes (u32 length + data, at most max)

var _ ports.PeerTransfer = (*Peers)(nil)

// transferSegmentMinWireBytes is the smallest encoded listing entry: an
// empty name's length and the size.
const transferSegmentMinWireBytes = 4 + 8

func appendTransferRef(b []byte, ref domain.PartitionRef) []byte {
	b = appendString(b, ref.Topic)
	b = appendString(b, string(ref.TopicID))
	return appendI32(b, ref.Partition)
}

func (r *reader) transferRef() domain.PartitionRef {
	ref := domain.PartitionRef{Topic: r.string("topic", wireNameMaxBytes), TopicID: domain.TopicID(r.string("topic id", wireNameMaxBytes))}
	ref.Partition = r.i32("partition")
	if r.err == nil && ref.Partition < 0 {
		r.fail("partition %d", ref.Partition)
	}
	return ref
}

func decodeListingRequest(p []byte) (domain.PartitionRef, error) {
	r := reader{b: p}
	ref := r.transferRef()
	return ref, r.end("segment listing request")
}

func appendListingBody(b []byte, l ports.TransferListing) []byte {
	b = appendI64(b, l.HighWatermark)
	b = appendFiles(b, l.Segments)
	b = appendFiles(b, l.Side)
	return appendMarker(b, l.Marker)
}

// appendMarker encodes a listing's move.marker: a presence flag, then the
// promoted boundary, the force flag and the links.
func appendMarker(b []byte, m *ports.MoveMarker) []byte {
	b = appendBool(b, m != nil)
	if m == nil {
		return b
	}
	b = appendI64(b, m.PromotedHighWatermark)
	b = appendBool(b, m.Forced)
	b = appendU32(b, uint32(len(m.Links)))
	for _, l := range m.Links {
		b = appendString(appendString(b, l.Child), l.Epoch)
	}
	return b
}

func appendFiles(b []byte, files []ports.TransferFile) []byte {
	b = appendU32(b, uint32(len(files)))
	for _, f := range files {
		b = appendString(b, f.Name)
		b = appendI64(b, f.Size)
	}
	return b
}

func decodeListingBody(body []byte) (ports.TransferListing, error) {
	r := reader{b: body}
	l := r.listing()
	if err := r.end("segment listing"); err != nil {
		return ports.TransferListing{}, err
	}
	return l, nil
}

func (r *reader) listing() ports.TransferListing {
	l := ports.TransferListing{HighWatermark: r.i64("high watermark")}
	if r.err == nil && l.HighWatermark < 0 {
		r.fail("high watermark %d", l.HighWatermark)
	}
	l.Segments = r.files("segment")
	l.Side = r.files("side file")
	l.Marker = r.marker()
	return l
}

// markerLinkMinWireBytes is the smallest encoded marker link: two empty
// strings.
const markerLinkMinWireBytes = 4 + 4

func (r *reader) marker() *ports.MoveMarker {
	if !r.bool("move marker flag") {
		return nil
	}
	m := &ports.MoveMarker{PromotedHighWatermark: r.i64("promoted boundary"), Forced: r.bool("force flag")}
	if r.err == nil && m.PromotedHighWatermark < 0 {
		r.fail("promoted boundary %d", m.PromotedHighWatermark)
	}
	n := r.count("marker link count", markerLinkMinWireBytes, transferSegmentsMaxCount)
	for i := 0; i < n && r.err == nil; i++ {
		m.Links = append(m.Links, ports.MarkerLink{Child: r.string("linked child", wireNameMaxBytes), Epoch: r.string("link epoch", wireNameMaxBytes)})
	}
	return m
}

func (r *reader) files(what string) []ports.TransferFile {
	n := r.count(what+" count", transferSegmentMinWireBytes, transferSegmentsMaxCount)
	if r.err != nil {
		return nil
	}
	out := make([]ports.TransferFile, n)
	for i := 0; i < n && r.err == nil; i++ {
		out[i] = ports.TransferFile{Name: r.string(what+" name", wireNameMaxBytes), Size: r.i64(what + " size")}
		if r.err == nil && out[i].Size < 0 {
			r.fail("%s %q size %d", what, out[i].Name, out[i].Size)
		}
	}
	return out
}

// handoffRequest is a decoded op 24 request.
type handoffRequest struct {
	ref   domain.PartitionRef
	token string
}

func appendHandoffRequest(b []byte, q handoffRequest) []byte {
	return appendString(appendTransferRef(b, q.ref), q.token)
}

func decodeHandoffRequest(p []byte) (handoffRequest, error) {
	r := reader{b: p}
	q := handoffRequest{ref: r.transferRef(), token: r.string("freeze token", wireNameMaxBytes)}
	return q, r.end("prepare handoff request")
}

func appendHandoffBody(b []byte, token string, l ports.TransferListing) []byte {
	return appendListingBody(appendString(b, token), l)
}

func decodeHandoffBody(body []byte) (string, ports.TransferListing, error) {
	r := reader{b: body}
	token := r.string("freeze token", wireNameMaxBytes)
	l := r.listing()
	if r.err == nil && token == "" {
		r.fail("empty freeze token")
	}
	if err := r.end("prepare handoff reply"); err != nil {
		return "", ports.TransferListing{}, err
	}
	return token, l, nil
}

// PrepareHandoff asks node, ref's owner, to freeze commits to ref and list
// it (op 24): with token empty a new freeze, with the token of the freeze
// that holds a re-arm; a lapsed or replaced freeze answers
// domain.ErrConflict.
func (p *Peers) PrepareHandoff(ctx context.Context, node string, ref domain.PartitionRef, token string) (string, ports.TransferListing, error) {
	body, err := p.call(ctx, node, OpPrepareHandoff, appendHandoffRequest(nil, handoffRequest{ref: ref, token: token}))
	if err != nil {
		return "", ports.TransferListing{}, err
	}
	tok, l, err := decodeHandoffBody(body)
	if err != nil {
		return "", ports.TransferListing{}, unreadableReply("prepare handoff", node, err)
	}
	return tok, l, nil
}

// chunkRequest is a decoded op 23 request.
type chunkRequest struct {
	ref  domain.PartitionRef
	name string
	off  int64
	max  int
}

func appendChunkRequest(b []byte, q chunkRequest) []byte {
	b = appendTransferRef(b, q.ref)
	b = appendString(b, q.name)
	b = appendI64(b, q.off)
	return appendU32(b, uint32(q.max))
}

func decodeChunkRequest(p []byte) (chunkRequest, error) {
	r := reader{b: p}
	q := chunkRequest{ref: r.transferRef(), name: r.string("segment name", wireNameMaxBytes), off: r.i64("offset")}
	max := r.u32("max")
	if r.err == nil && (q.off < 0 || max == 0 || max > transferChunkMaxBytes) {
		r.fail("chunk at %d of %d bytes (1 to %d)", q.off, max, transferChunkMaxBytes)
	}
	q.max = int(max)
	if err := r.end("segment chunk request"); err != nil {
		return chunkRequest{}, err
	}
	return q, nil
}

// TransferListing asks node, a partition's owner, for the segment listing
// of ref (op 22) under the caller's deadline.
func (p *Peers) TransferListing(ctx context.Context, node string, ref domain.PartitionRef) (ports.TransferListing, error) {
	body, err := p.call(ctx, node, OpListPartitionSegs, appendTransferRef(nil, ref))
	if err != nil {
		return ports.TransferListing{}, err
	}
	l, err := decodeListingBody(body)
	if err != nil {
		return ports.TransferListing{}, unreadableReply("segment listing", node, err)
	}
	return l, nil
}

// FetchTransferChunk reads up to max bytes (at most 1 MiB) of segment name
// of ref from node (op 23) under the caller's deadline.
func (p *Peers) FetchTransferChunk(ctx context.Context, node string, ref domain.PartitionRef, name string, off int64, max int) ([]byte, error) {
	if max <= 0 || max > transferChunkMaxBytes {
		return nil, fmt.Errorf("quicpeer: chunk of %d bytes (1 to %d): %w", max, transferChunkMaxBytes, domain.ErrInvalidArgument)
	}
	body, err := p.call(ctx, node, OpFetchSegmentChunk, appendChunkRequest(nil, chunkRequest{ref: ref, name: name, off: off, max: max}))
	if err != nil {
		return nil, err
	}
	r := reader{b: body}
	chunk := r.bytes("chunk")
	if err := r.end("segment chunk"); err != nil {
		return nil, unreadableReply("segment chunk", node, err)
	}
	if len(chunk) > max {
		return nil, unreadableReply("segment chunk", node, fmt.Errorf("%d bytes for %d asked: %w", len(chunk), max, ErrBadPayload))
	}
	return chunk, nil
}

// Transferer is a partition's source side of a move:
// *segmentlog.Store satisfies it.
type Transferer interface {
	ports.PartitionTransfer
	ports.PartitionFreezer
}

// RegisterTransfer serves ListPartitionSegments (op 22),
// FetchSegmentChunk (op 23) and PrepareHandoff (op 24, a freeze of
// freezeTTL) from t. It panics on a nil t.
func RegisterTransfer(srv *Server, t Transferer, freezeTTL time.Duration) {
	if t == nil || freezeTTL <= 0 {
		panic("quicpeer: nil partition transfer or no freeze TTL")
	}
	srv.Handle(OpPrepareHandoff, func(_ context.Context, p []byte) ([]byte, error) {
		q, err := decodeHandoffRequest(p)
		if err != nil {
			return errReply(err), nil
		}
		token, l, err := t.Freeze(q.ref, q.token, freezeTTL)
		if err != nil {
			return errReply(err), nil
		}
		return okReply(appendHandoffBody(nil, token, l)), nil
	})
	srv.Handle(OpListPartitionSegs, func(_ context.Context, p []byte) ([]byte, error) {
		ref, err := decodeListingRequest(p)
		if err != nil {
			return errReply(err), nil
		}
		l, err := t.TransferListing(ref)
		if err != nil {
			return errReply(err), nil
		}
		return okReply(appendListingBody(nil, l)), nil
	})
	srv.Handle(OpFetchSegmentChunk, func(_ context.Context, p []byte) ([]byte, error) {
		q, err := decodeChunkRequest(p)
		if err != nil {
			return errReply(err), nil
		}
		chunk, err := t.ReadTransferChunk(q.ref, q.name, q.off, q.max)
		if err != nil {
			return errReply(err), nil
		}
		return okReply(appendBytes(make([]byte, 0, 4+len(chunk)), chunk)), nil
	})
}
