package quicpeer

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/narad/narad/ports"
)

func sampleLagRequest() fanoutLagRequest {
	return fanoutLagRequest{
		parent: "orders", parentID: "0123456789abcdef", parts: []int32{4, 0, 4, -1},
		children: []ports.ChildEpoch{{Child: "audit", Epoch: "00000000000000e1"}, {Child: "billing", Epoch: ""}},
	}
}

func sampleLags() []ports.CursorLag {
	return []ports.CursorLag{
		{Reported: true, NextOffset: 17, HighWatermark: 1 << 40},
		{}, // not reported: every number zero
		{Reported: true, NextOffset: 5, HighWatermark: 5},
	}
}

// ensure that every field of ports.CursorLag crosses the wire (story F11:
// one DTO, no field forgotten by the RPC codec).
func TestCursorLagFieldParity(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeOf(ports.CursorLag{})
	for i := range typ.NumField() {
		var l ports.CursorLag
		f := reflect.ValueOf(&l).Elem().Field(i)
		switch f.Kind() {
		case reflect.Int64:
			f.SetInt(7)
		case reflect.Bool:
			f.SetBool(true)
		default:
			t.Fatalf("field %s of type %s: teach the fanout cursors codec and this test", typ.Field(i).Name, f.Type())
		}
		got, err := decodeFanoutLagReplyBody(appendFanoutLagReplyBody(nil, []ports.CursorLag{l}))
		if err != nil || len(got) != 1 || got[0] != l {
			t.Errorf("field %s: sent %+v, got %+v (%v)", typ.Field(i).Name, l, got, err)
		}
	}
	got, err := decodeFanoutLagReplyBody(appendFanoutLagReplyBody(nil, sampleLags()))
	if err != nil || !reflect.DeepEqual(got, sampleLags()) {
		t.Fatalf("sample: got %+v (%v), want %+v", got, err, sampleLags())
	}
}

// ensure that every field of the request, ports.ChildEpoch's included,
// crosses the wire: the parent, its incarnation (or none), the partitions
// in order with duplicates and out-of-range values (the owner judges them)
// and the children with their epochs in order.
func TestFanoutLagRequestFieldParity(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeOf(ports.ChildEpoch{})
	for i := range typ.NumField() {
		var c ports.ChildEpoch
		reflect.ValueOf(&c).Elem().Field(i).SetString("x")
		req := fanoutLagRequest{parent: "p", parts: []int32{0}, children: []ports.ChildEpoch{c}}
		got, err := decodeFanoutLagRequest(appendFanoutLagRequest(nil, req))
		if err != nil || !reflect.DeepEqual(got, req) {
			t.Errorf("child field %s: sent %+v, got %+v (%v)", typ.Field(i).Name, req, got, err)
		}
	}
	for _, want := range []fanoutLagRequest{
		sampleLagRequest(),
		{parent: "orders", parts: []int32{}, children: []ports.ChildEpoch{}},
	} {
		enc := appendFanoutLagRequest(nil, want)
		if len(enc) != fanoutLagRequestSize(want) {
			t.Fatalf("size %d, encoded %d", fanoutLagRequestSize(want), len(enc))
		}
		got, err := decodeFanoutLagRequest(enc)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("sent %+v, got %+v (%v)", want, got, err)
		}
	}
}

// ensure that every prefix and any trailing byte of a request or reply is
// refused with ErrBadPayload, never half-decoded, and that lying counts,
// a bool byte other than 0 or 1, and more pairs than the cap are refused
// before they size anything.
func TestFanoutLagCodecRefusesTruncationAndLies(t *testing.T) {
	t.Parallel()
	req := appendFanoutLagRequest(nil, sampleLagRequest())
	body := appendFanoutLagReplyBody(nil, sampleLags())
	for n := range req {
		if _, err := decodeFanoutLagRequest(req[:n]); !errors.Is(err, ErrBadPayload) {
			t.Fatalf("request prefix of %d/%d bytes: %v", n, len(req), err)
		}
	}
	for n := range body {
		if _, err := decodeFanoutLagReplyBody(body[:n]); !errors.Is(err, ErrBadPayload) {
			t.Fatalf("reply prefix of %d/%d bytes: %v", n, len(body), err)
		}
	}
	head := appendString(appendString(nil, "t"), "")
	manyParts := appendU32(head, 1024)
	for range 1024 {
		manyParts = appendI32(manyParts, 0)
	}
	badBool := appendFanoutLagReplyBody(nil, sampleLags()[:1])
	badBool[4] = 2
	lies := map[string][]byte{
		"request_trailing_byte":     append(append([]byte(nil), req...), 0),
		"request_parts_past_data":   appendU32(head, 1000),
		"request_parts_past_cap":    appendU32(head, fanoutPartitionsMaxCount+1),
		"request_children_past_cap": appendU32(appendU32(head, 0), fanoutChildrenMaxCount+1),
		"request_pairs_past_cap":    append(appendU32(manyParts, 1000), make([]byte, 1000*childEpochMinWireBytes)...),
		"reply_trailing_byte":       append(append([]byte(nil), body...), 0),
		"reply_count_past_payload":  appendU32(nil, 1<<31),
		"reply_bool_not_0_or_1":     badBool,
	}
	for name, data := range lies {
		_, err := decodeFanoutLagRequest(data)
		if strings.HasPrefix(name, "reply") {
			_, err = decodeFanoutLagReplyBody(data)
		}
		if !errors.Is(err, ErrBadPayload) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzFanoutCursorsPayloads ensures that the op 17 decoders never panic,
// refuse only with ErrBadPayload, never return more pairs or entries than
// the caps, and that what they accept re-encodes to the bytes they read.
func FuzzFanoutCursorsPayloads(f *testing.F) {
	f.Add(appendFanoutLagRequest(nil, sampleLagRequest()))
	f.Add(appendFanoutLagRequest(nil, fanoutLagRequest{parent: "t"}))
	f.Add(appendFanoutLagReplyBody(nil, sampleLags()))
	f.Add(okReply(appendFanoutLagReplyBody(nil, sampleLags()[:1])))
	f.Fuzz(func(t *testing.T, data []byte) {
		if req, err := decodeFanoutLagRequest(data); err != nil {
			if !errors.Is(err, ErrBadPayload) {
				t.Fatalf("request: unclassified error: %v", err)
			}
		} else {
			if len(req.parts)*len(req.children) > fanoutPairsMaxCount || len(req.children) > fanoutChildrenMaxCount {
				t.Fatalf("%d partitions × %d children above the caps", len(req.parts), len(req.children))
			}
			if again := appendFanoutLagRequest(nil, req); !reflect.DeepEqual(again, data) {
				t.Fatalf("request re-encodes as % x, read % x", again, data)
			}
		}
		lags, err := decodeFanoutLagReplyBody(data)
		if err != nil {
			if !errors.Is(err, ErrBadPayload) {
				t.Fatalf("reply: unclassified error: %v", err)
			}
			return
		}
		if len(lags) > fanoutPairsMaxCount {
			t.Fatalf("%d entries above the cap", len(lags))
		}
		if again := appendFanoutLagReplyBody(nil, lags); !reflect.DeepEqual(again, data) {
			t.Fatalf("reply re-encodes as % x, read % x", again, data)
		}
	})
}
