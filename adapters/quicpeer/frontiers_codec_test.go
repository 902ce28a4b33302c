package quicpeer

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

// ensure that every field of the frontiers request crosses the wire: the
// topic, the incarnation (or none: the live one) and the partitions in
// order, duplicates and out-of-range values included (the owner judges
// them), and that the reply's offsets cross in order.
func TestFrontiersCodecFieldParity(t *testing.T) {
	t.Parallel()
	for _, want := range []partsRequest{
		{topic: "orders", id: "0123456789abcdef", parts: []int32{4, 0, 4, -1, 1 << 30}},
		{topic: "orders", parts: []int32{}},
	} {
		enc := appendPartsRequest(nil, want.topic, want.id, want.parts)
		if len(enc) != partsRequestSize(want.topic, want.id, want.parts) {
			t.Fatalf("size %d, encoded %d", partsRequestSize(want.topic, want.id, want.parts), len(enc))
		}
		got, err := decodePartsRequest(enc)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("sent %+v, got %+v (%v)", want, got, err)
		}
	}
	for _, want := range [][]int64{{0, 7, math.MaxInt64, 1 << 40}, {}} {
		enc := appendFrontiersReplyBody(nil, want)
		if len(enc) != frontiersReplyBodySize(want) {
			t.Fatalf("reply size %d, encoded %d", frontiersReplyBodySize(want), len(enc))
		}
		got, err := decodeFrontiersReplyBody(enc)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("sent %v, got %v (%v)", want, got, err)
		}
	}
}

// ensure that every prefix and any trailing byte of a frontiers request or
// reply is refused with ErrBadPayload, never half-decoded, that lying
// counts are refused before they size anything, and that a negative offset
// is refused.
func TestFrontiersCodecRefusesTruncationAndLies(t *testing.T) {
	t.Parallel()
	req := appendPartsRequest(nil, "orders", "0123456789abcdef", []int32{1, 2, 3})
	body := appendFrontiersReplyBody(nil, []int64{4, 0, 9})
	for n := range req {
		if _, err := decodePartsRequest(req[:n]); !errors.Is(err, ErrBadPayload) {
			t.Fatalf("request prefix of %d/%d bytes: %v", n, len(req), err)
		}
	}
	for n := range body {
		if _, err := decodeFrontiersReplyBody(body[:n]); !errors.Is(err, ErrBadPayload) {
			t.Fatalf("reply prefix of %d/%d bytes: %v", n, len(body), err)
		}
	}
	lies := map[string]func() error{
		"request_trailing_byte": func() error { _, err := decodePartsRequest(append(req, 0)); return err },
		"reply_trailing_byte":   func() error { _, err := decodeFrontiersReplyBody(append(body, 0)); return err },
		"request_count_past_payload": func() error {
			_, err := decodePartsRequest(appendU32(appendString(appendString(nil, "t"), ""), 1000))
			return err
		},
		"request_count_past_cap": func() error {
			_, err := decodePartsRequest(appendU32(appendString(appendString(nil, "t"), ""), frontiersPartitionsMaxCount+1))
			return err
		},
		"request_name_past_cap": func() error {
			_, err := decodePartsRequest(appendU32(nil, wireNameMaxBytes+1))
			return err
		},
		"reply_count_past_payload": func() error { _, err := decodeFrontiersReplyBody(appendU32(nil, 1<<31)); return err },
		"reply_count_past_cap": func() error {
			_, err := decodeFrontiersReplyBody(appendU32(nil, frontiersPartitionsMaxCount+1))
			return err
		},
		"reply_negative_offset": func() error {
			_, err := decodeFrontiersReplyBody(appendFrontiersReplyBody(nil, []int64{3, -1}))
			return err
		},
	}
	for name, decode := range lies {
		if err := decode(); !errors.Is(err, ErrBadPayload) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzConsumerFrontiersPayloads ensures that the op 38 decoders never
// panic, refuse only with ErrBadPayload, never return more entries than the
// cap or a negative offset, and that what they accept re-encodes to the
// bytes they read.
func FuzzConsumerFrontiersPayloads(f *testing.F) {
	f.Add(appendPartsRequest(nil, "orders", "0123456789abcdef", []int32{0, 7}))
	f.Add(appendPartsRequest(nil, "t", "", nil))
	f.Add(appendFrontiersReplyBody(nil, []int64{4, 0, math.MaxInt64}))
	f.Add(okReply(appendFrontiersReplyBody(nil, []int64{1})))
	f.Fuzz(func(t *testing.T, data []byte) {
		if req, err := decodePartsRequest(data); err != nil {
			if !errors.Is(err, ErrBadPayload) {
				t.Fatalf("request: unclassified error: %v", err)
			}
		} else {
			if len(req.parts) > frontiersPartitionsMaxCount {
				t.Fatalf("%d partitions above the cap", len(req.parts))
			}
			if again := appendPartsRequest(nil, req.topic, req.id, req.parts); !reflect.DeepEqual(again, data) {
				t.Fatalf("request re-encodes as % x, read % x", again, data)
			}
		}
		offsets, err := decodeFrontiersReplyBody(data)
		if err != nil {
			if !errors.Is(err, ErrBadPayload) {
				t.Fatalf("reply: unclassified error: %v", err)
			}
			return
		}
		if len(offsets) > frontiersPartitionsMaxCount {
			t.Fatalf("%d entries above the cap", len(offsets))
		}
		for i, o := range offsets {
			if o < 0 {
				t.Fatalf("entry %d: negative offset %d accepted", i, o)
			}
		}
		if again := appendFrontiersReplyBody(nil, offsets); !reflect.DeepEqual(again, data) {
			t.Fatalf("reply re-encodes as % x, read % x", again, data)
		}
	})
}
