package quicpeer

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

func sampleStats() []ports.LogStats {
	return []ports.LogStats{
		{Segments: 3, SizeBytes: 1 << 40, OldestOffset: 17, NextOffset: 1_000_001, HighWatermark: 1_000_000,
			OldestSegmentAt: time.Date(2026, 10, 1, 12, 0, 0, 123456789, time.UTC)},
		{}, // a partition never written: every number zero, time unknown
		{Segments: 1, NextOffset: 5, HighWatermark: 5, OldestSegmentAt: time.Unix(-1, 0).UTC()},
	}
}

// ensure that every field of ports.LogStats crosses the wire (story F11:
// one DTO, no field forgotten by the RPC codec), the time to the
// nanosecond and the zero time as the zero time.
func TestLogStatsFieldParity(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeOf(ports.LogStats{})
	for i := range typ.NumField() {
		var st ports.LogStats
		f := reflect.ValueOf(&st).Elem().Field(i)
		switch f.Interface().(type) {
		case int, int64:
			f.SetInt(7)
		case time.Time:
			f.Set(reflect.ValueOf(time.Date(2031, 2, 3, 4, 5, 6, 789, time.UTC)))
		default:
			t.Fatalf("field %s of type %s: teach the stats codec and this test", typ.Field(i).Name, f.Type())
		}
		got, err := decodeStatsReplyBody(appendStatsReplyBody(nil, []ports.LogStats{st}))
		if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], st) {
			t.Errorf("field %s: sent %+v, got %+v (%v)", typ.Field(i).Name, st, got, err)
		}
	}
	want := sampleStats()
	got, err := decodeStatsReplyBody(appendStatsReplyBody(nil, want))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("sample: got %+v (%v), want %+v", got, err, want)
	}
}

// ensure that every field of the stats request crosses the wire: the
// topic, the incarnation (or none: the live one) and the partitions in
// order, duplicates and out-of-range values included (the owner judges
// them).
func TestStatsRequestFieldParity(t *testing.T) {
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
}

// ensure that every prefix and any trailing byte of a stats request or
// reply is refused with ErrBadPayload, never half-decoded, and that lying
// counts are refused before they size anything.
func TestStatsCodecRefusesTruncationAndLies(t *testing.T) {
	t.Parallel()
	req := appendPartsRequest(nil, "orders", "0123456789abcdef", []int32{1, 2, 3})
	body := appendStatsReplyBody(nil, sampleStats())
	for n := range req {
		if _, err := decodePartsRequest(req[:n]); !errors.Is(err, ErrBadPayload) {
			t.Fatalf("request prefix of %d/%d bytes: %v", n, len(req), err)
		}
	}
	for n := range body {
		if _, err := decodeStatsReplyBody(body[:n]); !errors.Is(err, ErrBadPayload) {
			t.Fatalf("reply prefix of %d/%d bytes: %v", n, len(body), err)
		}
	}
	if _, err := decodePartsRequest(append(req, 0)); !errors.Is(err, ErrBadPayload) {
		t.Fatalf("request trailing byte: %v", err)
	}
	if _, err := decodeStatsReplyBody(append(body, 0)); !errors.Is(err, ErrBadPayload) {
		t.Fatalf("reply trailing byte: %v", err)
	}
	lies := map[string]func() error{
		"request_count_past_payload": func() error {
			_, err := decodePartsRequest(appendU32(appendString(appendString(nil, "t"), ""), 1000))
			return err
		},
		"request_count_past_cap": func() error {
			_, err := decodePartsRequest(appendU32(appendString(appendString(nil, "t"), ""), statsPartitionsMaxCount+1))
			return err
		},
		"reply_count_past_payload": func() error {
			_, err := decodeStatsReplyBody(appendU32(nil, 1<<31))
			return err
		},
	}
	for name, decode := range lies {
		if err := decode(); !errors.Is(err, ErrBadPayload) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzPartitionStatsPayloads ensures that the op 8 decoders never panic,
// refuse only with ErrBadPayload, never return more entries than the cap,
// and that what they accept re-encodes to the bytes they read.
func FuzzPartitionStatsPayloads(f *testing.F) {
	f.Add(appendPartsRequest(nil, "orders", "0123456789abcdef", []int32{0, 7}))
	f.Add(appendPartsRequest(nil, "t", "", nil))
	f.Add(appendStatsReplyBody(nil, sampleStats()))
	f.Add(okReply(appendStatsReplyBody(nil, sampleStats()[:1])))
	f.Fuzz(func(t *testing.T, data []byte) {
		if req, err := decodePartsRequest(data); err != nil {
			if !errors.Is(err, ErrBadPayload) {
				t.Fatalf("request: unclassified error: %v", err)
			}
		} else {
			if len(req.parts) > statsPartitionsMaxCount {
				t.Fatalf("%d partitions above the cap", len(req.parts))
			}
			if again := appendPartsRequest(nil, req.topic, req.id, req.parts); !reflect.DeepEqual(again, data) {
				t.Fatalf("request re-encodes as % x, read % x", again, data)
			}
		}
		stats, err := decodeStatsReplyBody(data)
		if err != nil {
			if !errors.Is(err, ErrBadPayload) {
				t.Fatalf("reply: unclassified error: %v", err)
			}
			return
		}
		if len(stats) > statsPartitionsMaxCount {
			t.Fatalf("%d entries above the cap", len(stats))
		}
		again, err := decodeStatsReplyBody(appendStatsReplyBody(nil, stats))
		if err != nil || !reflect.DeepEqual(again, stats) {
			t.Fatalf("reply re-encoding decoded as %+v, %v; want %+v", again, err, stats)
		}
	})
}

// ensure that the request builder refuses more partitions than an owner
// would decode, before sending anything.
func TestStatsAboveCapRefusedLocally(t *testing.T) {
	t.Parallel()
	c, _ := newClient(t, secretA)
	p := NewPeers(c, staticResolver{})
	_, err := p.PartitionStats(t.Context(), "x", "t", "", make([]int32, statsPartitionsMaxCount+1))
	if !errors.Is(err, domain.ErrInvalidArgument) {
		t.Fatalf("err = %v", err)
	}
}
