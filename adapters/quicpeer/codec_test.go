package quicpeer

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ensure that every prefix of a commit batch and every extra byte are
// refused with ErrBadPayload, never half-decoded. The one exception is by
// design (§3.7): the records without their trailing id section are a whole
// batch without an id.
func TestCommitRequestRefusesTruncationAndTrailingBytes(t *testing.T) {
	t.Parallel()
	for _, req := range []ports.CommitRequest{sampleCommit(), {Topic: "t", Records: []domain.Record{{Payload: []byte("x")}}}} {
		enc := appendCommitRequest(nil, req)
		if len(enc) != commitRequestSize(req) {
			t.Fatalf("size %d, encoded %d", commitRequestSize(req), len(enc))
		}
		noID := req
		noID.TopicID = ""
		for n := range enc {
			got, err := decodeCommitRequest(enc[:n])
			if err == nil && n == commitRequestSize(noID) && reflect.DeepEqual(got, noID) {
				continue
			}
			if !errors.Is(err, ErrBadPayload) {
				t.Fatalf("prefix of %d/%d bytes: %v", n, len(enc), err)
			}
		}
		if _, err := decodeCommitRequest(append(enc, 0)); !errors.Is(err, ErrBadPayload) {
			t.Fatalf("trailing byte: %v", err)
		}
	}
}

// ensure that a lying record count and bad run sections are refused
// before anything is sized by them.
func TestCommitRequestRefusesLyingCountsAndRuns(t *testing.T) {
	t.Parallel()
	lying := appendU32(appendI32(appendString(nil, "t"), 0), commitRecordsMaxCount)
	if _, err := decodeCommitRequest(lying); !errors.Is(err, ErrBadPayload) {
		t.Fatalf("lying count: %v", err)
	}
	if n := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = decodeCommitRequest(lying)
		}
	}).AllocedBytesPerOp(); n > 4096 {
		t.Fatalf("a lying count of %d records cost %d bytes", commitRecordsMaxCount, n)
	}
	base := appendCommitRequest(nil, ports.CommitRequest{Topic: "t", Records: []domain.Record{{Payload: []byte("a")}, {Payload: []byte("b")}}})
	runs := map[string][]byte{
		"no_runs":      appendU32(nil, 0),
		"short_cover":  appendString(appendU32(appendU32(nil, 1), 1), "0123456789abcdef"),
		"empty_id":     appendString(appendU32(appendU32(nil, 1), 2), ""),
		"mixed_ids":    appendString(appendU32(appendString(appendU32(appendU32(nil, 2), 1), "0123456789abcdef"), 1), "fedcba9876543210"),
		"lying_count":  appendU32(nil, 1<<31),
		"lying_cover":  appendString(appendU32(appendU32(nil, 1), 1<<31), "0123456789abcdef"),
		"bad_count_8b": appendU64(nil, 1),
	}
	for name, tail := range runs {
		if _, err := decodeCommitRequest(append(append([]byte(nil), base...), tail...)); !errors.Is(err, ErrBadPayload) {
			t.Errorf("%s: %v", name, err)
		}
	}
	twoRuns := appendString(appendU32(appendString(appendU32(appendU32(nil, 2), 1), "0123456789abcdef"), 1), "0123456789abcdef")
	got, err := decodeCommitRequest(append(append([]byte(nil), base...), twoRuns...))
	if err != nil || got.TopicID != "0123456789abcdef" {
		t.Fatalf("two runs of one id: %+v, %v", got, err)
	}
}

// ensure that every field of the shared consume request crosses the wire
// (story F11: one request DTO, no field forgotten by the RPC codec).
func TestRemoteConsumeFieldParity(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeOf(ports.RemoteConsume{})
	for i := range typ.NumField() {
		var req ports.RemoteConsume
		f := reflect.ValueOf(&req).Elem().Field(i)
		setNonZero(t, typ.Field(i).Name, f)
		got, _, err := decodeConsumeRequest(appendConsumeRequest(nil, req))
		if err != nil || got != req {
			t.Errorf("field %s: sent %+v, got %+v (%v)", typ.Field(i).Name, req, got, err)
		}
	}
}

// ensure that every field of a commit request and of its records, except
// the offset the owner assigns, crosses the wire.
func TestCommitRequestFieldParity(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeOf(domain.Record{})
	for i := range typ.NumField() {
		if typ.Field(i).Name == "Offset" {
			continue // assigned by the owner's log
		}
		rec := domain.Record{Payload: []byte("p")}
		setNonZero(t, typ.Field(i).Name, reflect.ValueOf(&rec).Elem().Field(i))
		req := ports.CommitRequest{Topic: "t", TopicID: "0123456789abcdef", Partition: 9, Records: []domain.Record{rec}}
		got, err := decodeCommitRequest(appendCommitRequest(nil, req))
		if scheduled(req) { // a scheduled record travels as op 40
			got, err = decodeCommitScheduled(appendCommitScheduled(nil, req))
		}
		if err != nil || !reflect.DeepEqual(got, req) {
			t.Errorf("record field %s: sent %+v, got %+v (%v)", typ.Field(i).Name, req, got, err)
		}
	}
	if n := reflect.TypeOf(ports.CommitRequest{}).NumField(); n != 4 {
		t.Fatalf("ports.CommitRequest has %d fields; teach the codec and this test the new one", n)
	}
}

func setNonZero(t *testing.T, name string, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int32, reflect.Int64:
		if v.Type() == reflect.TypeOf(time.Duration(0)) {
			v.SetInt(int64(1500 * time.Millisecond))
		} else {
			v.SetInt(3)
		}
	case reflect.Uint8:
		v.SetUint(2)
	case reflect.Slice:
		v.SetBytes([]byte("kv"))
	default:
		t.Fatalf("field %s of kind %s: teach the parity test", name, v.Kind())
	}
}

// ensure that deliveries, settles and ack batches round-trip and refuse
// truncation.
func TestForwardCodecsRoundTrip(t *testing.T) {
	t.Parallel()
	ds := sampleDeliveries()
	enc := appendDeliveries(nil, ds)
	if got, err := decodeDeliveries(enc); err != nil || !reflect.DeepEqual(got, ds) {
		t.Fatalf("deliveries: %+v, %v", got, err)
	}
	items := []ackItem{{ports.SettleNack, domain.ReceiptHandle{Partition: 1, Offset: 2, Nonce: 3}}}
	ab := appendAckBatch(nil, "t", items)
	if topic, got, err := decodeAckBatch(ab); err != nil || topic != "t" || !reflect.DeepEqual(got, items) {
		t.Fatalf("ack batch: %v %+v %v", topic, got, err)
	}
	for _, b := range [][]byte{enc, ab} {
		for n := range b {
			_, e1 := decodeDeliveries(b[:n])
			_, _, e2 := decodeAckBatch(b[:n])
			if e1 == nil && e2 == nil {
				t.Fatalf("a %d-byte prefix decoded", n)
			}
		}
	}
}
