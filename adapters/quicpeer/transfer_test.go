package quicpeer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// memTransfer serves one partition's segments from memory.
type memTransfer struct {
	ref   domain.PartitionRef
	hwm   int64
	files map[string][]byte
	names []string
}

func (m *memTransfer) TransferListing(ref domain.PartitionRef) (ports.TransferListing, error) {
	if ref != m.ref {
		return ports.TransferListing{}, domain.ErrTopicNotFound
	}
	l := ports.TransferListing{HighWatermark: m.hwm}
	for _, n := range m.names {
		l.Segments = append(l.Segments, ports.TransferFile{Name: n, Size: int64(len(m.files[n]))})
	}
	return l, nil
}

func (m *memTransfer) Freeze(ref domain.PartitionRef, token string, _ time.Duration) (string, ports.TransferListing, error) {
	if token != "" && token != "t0ken" {
		return "", ports.TransferListing{}, domain.Refuse(domain.ErrConflict, "the freeze lapsed")
	}
	l, err := m.TransferListing(ref)
	return "t0ken", l, err
}

func (m *memTransfer) ReadTransferChunk(ref domain.PartitionRef, name string, off int64, max int) ([]byte, error) {
	f, ok := m.files[name]
	if ref != m.ref || !ok {
		return nil, domain.Refuse(domain.ErrOffsetGone, "segment "+name+" is gone")
	}
	if off >= int64(len(f)) {
		return []byte{}, nil
	}
	return f[off:min(int64(len(f)), off+int64(max))], nil
}

// Ensure that a segment listing and chunk reads (ops 22, 23) cross two
// nodes intact: a destination that copies what is listed, chunk by chunk,
// ends with the source's bytes; a gone segment comes back as its sentinel;
// a chunk above 1 MiB is refused before sending.
func TestTransferOpsCopyASegment(t *testing.T) {
	ref := domain.PartitionRef{Topic: "orders", TopicID: "00000000000000a1", Partition: 2}
	big := bytes.Repeat([]byte("0123456789abcdef"), 200_000) // 3.2 MB
	src := &memTransfer{ref: ref, hwm: 41, names: []string{"00000000000000000000.log", "00000000000000000017.log"},
		files: map[string][]byte{"00000000000000000000.log": big, "00000000000000000017.log": []byte("tail")}}
	srv, _ := newServer(t, ServerOptions{})
	RegisterTransfer(srv, src, time.Minute)
	c, _ := newClient(t, secretA)
	p := NewPeers(c, staticResolver{"s": srv.Addr().String()})
	ctx := context.Background()

	l, err := p.TransferListing(ctx, "s", ref)
	if err != nil || l.HighWatermark != 41 || len(l.Segments) != 2 || l.Segments[0].Size != int64(len(big)) {
		t.Fatalf("listing %+v, %v", l, err)
	}
	for _, f := range l.Segments {
		var got []byte
		for off := int64(0); off < f.Size; {
			b, err := p.FetchTransferChunk(ctx, "s", ref, f.Name, off, transferChunkMaxBytes)
			if err != nil || len(b) == 0 {
				t.Fatalf("chunk of %s at %d: %d bytes, %v", f.Name, off, len(b), err)
			}
			got = append(got, b...)
			off += int64(len(b))
		}
		if !bytes.Equal(got, src.files[f.Name]) {
			t.Fatalf("%s copied as %d bytes, want %d", f.Name, len(got), len(src.files[f.Name]))
		}
	}
	if _, err := p.FetchTransferChunk(ctx, "s", ref, "00000000000000000099.log", 0, 10); !errors.Is(err, domain.ErrOffsetGone) {
		t.Fatalf("a gone segment: %v", err)
	}
	if _, err := p.TransferListing(ctx, "s", domain.PartitionRef{Topic: "other", TopicID: "00000000000000a1"}); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("another partition: %v", err)
	}
	if _, err := p.FetchTransferChunk(ctx, "s", ref, l.Segments[0].Name, 0, transferChunkMaxBytes+1); !errors.Is(err, domain.ErrInvalidArgument) {
		t.Fatalf("a chunk over 1 MiB: %v", err)
	}
	token, fl, err := p.PrepareHandoff(ctx, "s", ref, "")
	if err != nil || token != "t0ken" || !reflect.DeepEqual(fl, l) {
		t.Fatalf("prepare handoff: %q %+v %v", token, fl, err)
	}
	if _, _, err := p.PrepareHandoff(ctx, "s", ref, "other"); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("a lapsed freeze: %v", err)
	}
}

// Ensure that the transfer decoders refuse truncation, trailing bytes,
// negative numbers and chunk sizes out of range.
func TestTransferDecodersRefuseBadPayloads(t *testing.T) {
	ref := domain.PartitionRef{Topic: "t", TopicID: "00000000000000a1", Partition: 1}
	good := appendChunkRequest(nil, chunkRequest{ref: ref, name: "00000000000000000000.log", off: 5, max: 10})
	if q, err := decodeChunkRequest(good); err != nil || q.ref != ref || q.off != 5 || q.max != 10 {
		t.Fatalf("round trip: %+v, %v", q, err)
	}
	bad := [][]byte{
		good[:len(good)-1],
		append(append([]byte{}, good...), 0),
		appendChunkRequest(nil, chunkRequest{ref: ref, name: "x", off: -1, max: 10}),
		appendChunkRequest(nil, chunkRequest{ref: ref, name: "x", off: 0, max: 0}),
		appendChunkRequest(nil, chunkRequest{ref: ref, name: "x", off: 0, max: transferChunkMaxBytes + 1}),
		appendChunkRequest(nil, chunkRequest{ref: domain.PartitionRef{Topic: "t", Partition: -2}, name: "x", max: 1}),
	}
	for i, b := range bad {
		if _, err := decodeChunkRequest(b); !errors.Is(err, ErrBadPayload) {
			t.Errorf("chunk request %d: %v", i, err)
		}
	}
	marked := ports.TransferListing{HighWatermark: 3, Marker: &ports.MoveMarker{PromotedHighWatermark: 3, Forced: true,
		Links: []ports.MarkerLink{{Child: "c", Epoch: "e"}}}}
	if l, err := decodeListingBody(appendListingBody(nil, marked)); err != nil || !reflect.DeepEqual(l.Marker, marked.Marker) {
		t.Fatalf("marker round trip: %+v, %v", l.Marker, err)
	}
	body := appendListingBody(nil, ports.TransferListing{HighWatermark: 3, Segments: []ports.TransferFile{{Name: "a", Size: 9}}})
	for i, b := range [][]byte{body[:len(body)-1], append(append([]byte{}, body...), 1),
		appendListingBody(nil, ports.TransferListing{HighWatermark: -1}),
		appendListingBody(nil, ports.TransferListing{Marker: &ports.MoveMarker{PromotedHighWatermark: -1}}),
		appendListingBody(nil, ports.TransferListing{Segments: []ports.TransferFile{{Name: "a", Size: -1}}})} {
		if _, err := decodeListingBody(b); !errors.Is(err, ErrBadPayload) {
			t.Errorf("listing body %d: %v", i, err)
		}
	}
}

// FuzzTransferPayloads feeds arbitrary bytes to the three transfer
// decoders: none may panic, and what one accepts encodes back to the
// same bytes.
func FuzzTransferPayloads(f *testing.F) {
	ref := domain.PartitionRef{Topic: "t", TopicID: "00000000000000a1", Partition: 1}
	f.Add(appendTransferRef(nil, ref))
	f.Add(appendChunkRequest(nil, chunkRequest{ref: ref, name: "00000000000000000000.log", off: 5, max: 10}))
	f.Add(appendListingBody(nil, ports.TransferListing{HighWatermark: 3, Segments: []ports.TransferFile{{Name: "a", Size: 9}}}))
	f.Add(appendListingBody(nil, ports.TransferListing{HighWatermark: 3, Marker: &ports.MoveMarker{PromotedHighWatermark: 3, Links: []ports.MarkerLink{{Child: "c", Epoch: "e"}}}}))
	f.Add(appendHandoffRequest(nil, handoffRequest{ref: ref, token: "t"}))
	f.Add(appendHandoffBody(nil, "t", ports.TransferListing{HighWatermark: 1, Side: []ports.TransferFile{{Name: "consumer.offset", Size: 8}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if q, err := decodeHandoffRequest(b); err == nil && !bytes.Equal(appendHandoffRequest(nil, q), b) {
			t.Fatalf("handoff request %x re-encodes differently", b)
		}
		if tok, l, err := decodeHandoffBody(b); err == nil {
			t2, l2, err := decodeHandoffBody(appendHandoffBody(nil, tok, l))
			if err != nil || t2 != tok || !reflect.DeepEqual(l2, l) {
				t.Fatalf("handoff body %q %+v re-decodes as %q %+v, %v", tok, l, t2, l2, err)
			}
		}
		if r, err := decodeListingRequest(b); err == nil && !bytes.Equal(appendTransferRef(nil, r), b) {
			t.Fatalf("listing request %x re-encodes as %x", b, appendTransferRef(nil, r))
		}
		if q, err := decodeChunkRequest(b); err == nil && !bytes.Equal(appendChunkRequest(nil, q), b) {
			t.Fatalf("chunk request %x re-encodes differently", b)
		}
		if l, err := decodeListingBody(b); err == nil {
			again, err := decodeListingBody(appendListingBody(nil, l))
			if err != nil || !reflect.DeepEqual(again, l) {
				t.Fatal(fmt.Sprintf("listing %+v re-decodes as %+v, %v", l, again, err))
			}
		}
	})
}
