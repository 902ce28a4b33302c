package meta_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/narad/narad/domain/meta"
)

func sampleEnvelopes() []meta.Envelope {
	at := int64(1_700_000_000_000)
	return []meta.Envelope{
		{Actor: "alice", AtMs: at, Event: &meta.CreateTopic{Name: "orders", ID: "00000000000000a1", Partitions: 3, VisibilityTimeoutMs: 30000, Owner: "alice"}},
		{AtMs: at, Event: &meta.UpdateTopicIf{UpdateTopic: meta.UpdateTopic{Name: "orders", Partitions: 4}, ID: "00000000000000a1"}},
		{AtMs: at, Event: &meta.CreateTopicWith{CreateTopic: meta.CreateTopic{Name: "c", ID: "00000000000000a2", Partitions: 1, VisibilityTimeoutMs: 1},
			Schema: []byte(`{"type":"object"}`), Parent: &meta.ParentSpec{Name: "orders", ID: "00000000000000a1", Epoch: "00000000000000e1", Offsets: []int64{1, 2, 3}}}},
		{AtMs: at, Event: &meta.PutSchemaIf{PutSchema: meta.PutSchema{Topic: "orders", Version: 1, Schema: []byte("true")}, ID: "00000000000000a1"}},
		{AtMs: at, Event: &meta.AttachChildIf{AttachChild: meta.AttachChild{Parent: "p", Child: "c", Epoch: "00000000000000e1", DelayMs: 5}, ParentID: "0000000000000001", ChildID: "0000000000000002"}},
		{AtMs: at, Event: &meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: "00000000000000a1", Partition: 2, Owner: "n1"}},
		{AtMs: at, Event: &meta.MemberJoin{ID: "n1", Addr: "h:1", ClusterAddr: "h:2", Build: "v1", EntryTypes: meta.AppliesThroughType}},
		{AtMs: at, Event: &meta.MarkMemberDeadIf{ID: "n1", Heartbeat: 17}},
		{AtMs: at, Event: &meta.CreateUser{Username: "bob", PasswordHash: []byte("h"), Grants: []meta.Grant{{Action: "produce", Patterns: []string{"o*"}}}}},
		{AtMs: at, Event: &meta.DeleteUserReleaseTopics{Username: "bob"}},
		{AtMs: at, Event: &meta.CompleteMove{Topic: "orders", Partition: 1, ExpectedOwner: "n1", Target: "n2"}},
		{AtMs: at, Event: &meta.UpdateRemote{Name: "dr", ID: "00000000000000f1", ExpectedCredentialVersion: 1, Limits: &meta.RemoteLimits{MaxInFlight: 1}}},
		{Actor: "admin", AtMs: at, Event: &meta.AttachRemoteChild{Parent: "orders", ParentID: "00000000000000a1", Child: "orders-dr",
			ChildID: "00000000000000c1", Epoch: "00000000000000e1", Offsets: []int64{4, 0}, Remote: "dr", RemoteID: "00000000000000f1",
			RemoteTopic: "orders", TargetID: "00000000000000b1", From: meta.RemoteFromAttach, Lanes: 2}},
		{Actor: "admin", AtMs: at, Event: &meta.SetRemoteChildState{Parent: "orders", Child: "orders-dr", ChildID: "00000000000000c1",
			Op: meta.RemoteOpSkip, Partition: 1, Offset: 7}},
		{Actor: "admin", AtMs: at, Event: &meta.SetRemoteChildState{Parent: "orders", Child: "orders-dr", ChildID: "00000000000000c1",
			Op: meta.RemoteOpPause, Reason: "maintenance"}},
	}
}

// Ensure that every sample survives encode → decode unchanged, and that one
// event always encodes to the same bytes.
func TestEnvelopeRoundTrip(t *testing.T) {
	t.Parallel()
	for _, env := range sampleEnvelopes() {
		b, err := meta.Encode(env)
		if err != nil {
			t.Fatalf("encode %s: %v", env.Event.Type(), err)
		}
		if b[0] != meta.FormatVersion || meta.EntryType(b[1]) != env.Event.Type() {
			t.Fatalf("%s: header % x", env.Event.Type(), b[:2])
		}
		again, _ := meta.Encode(env)
		if !bytes.Equal(b, again) {
			t.Fatalf("%s: encoding is not deterministic", env.Event.Type())
		}
		got, err := meta.Decode(b)
		if err != nil {
			t.Fatalf("decode %s: %v", env.Event.Type(), err)
		}
		if !reflect.DeepEqual(got, env) {
			t.Fatalf("%s: round trip\n got %#v\nwant %#v", env.Event.Type(), got.Event, env.Event)
		}
	}
}

// Ensure that bytes this build cannot apply are refused with the sentinel
// that says why, never decoded into something else.
func TestDecodeRefusesWhatItCannotApply(t *testing.T) {
	t.Parallel()
	good, err := meta.Encode(sampleEnvelopes()[0])
	if err != nil {
		t.Fatal(err)
	}
	body := good[2:]
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, meta.ErrCorruptEvent},
		{"header_only_half", []byte{1}, meta.ErrCorruptEvent},
		{"newer_version", append([]byte{2, 1}, body...), meta.ErrUnknownEventVersion},
		{"version_zero", append([]byte{0, 1}, body...), meta.ErrUnknownEventVersion},
		{"type_after_the_newest_applied", append([]byte{1, byte(meta.AppliesThroughType) + 1}, body...), meta.ErrUnknownEntryType},
		{"unknown_type", append([]byte{1, 200}, body...), meta.ErrUnknownEntryType},
		{"type_zero", append([]byte{1, 0}, body...), meta.ErrUnknownEntryType},
		{"not_json", []byte("\x01\x01{not json"), meta.ErrCorruptEvent},
		{"unknown_envelope_field", []byte(`` + "\x01\x01" + `{"actor":"","at_ms":0,"d":{"name":"x"},"extra":1}`), meta.ErrCorruptEvent},
		{"unknown_payload_field", []byte("\x01\x01" + `{"actor":"","at_ms":0,"d":{"name":"x","color":"red"}}`), meta.ErrCorruptEvent},
		{"null_payload", []byte("\x01\x01" + `{"actor":"","at_ms":0,"d":null}`), meta.ErrCorruptEvent},
		{"missing_payload", []byte("\x01\x01" + `{"actor":"","at_ms":0}`), meta.ErrCorruptEvent},
		{"trailing_data", append(bytes.Clone(good), []byte(" {}")...), meta.ErrCorruptEvent},
		{"wrong_payload_shape", []byte("\x01\x01" + `{"actor":"","at_ms":0,"d":{"partitions":"three"}}`), meta.ErrCorruptEvent},
		{"oversize", append([]byte{1, 1}, bytes.Repeat([]byte(" "), meta.MaxEntryBytes)...), meta.ErrCorruptEvent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := meta.Decode(tc.in)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decode = %v, want %v", err, tc.want)
			}
		})
	}
}

// Ensure that Encode refuses what no replica could decode.
func TestEncodeRefusesUnappliedAndOversize(t *testing.T) {
	t.Parallel()
	if _, err := meta.Encode(meta.Envelope{}); !errors.Is(err, meta.ErrInvalidEvent) {
		t.Fatalf("nil event: %v", err)
	}
	huge := &meta.PutSchema{Topic: "t", Version: 1, Schema: []byte(`"` + strings.Repeat("a", meta.MaxEntryBytes) + `"`)}
	if _, err := meta.Encode(meta.Envelope{Event: huge}); !errors.Is(err, meta.ErrInvalidEvent) {
		t.Fatalf("oversize: %v", err)
	}
}

// Ensure that Apply answers an invalid event with CodeInvalid and no writes,
// so a bad proposal is refused alike on every replica.
func TestApplyInvalidEventIsARefusal(t *testing.T) {
	t.Parallel()
	out, err := meta.Apply(meta.NewMemKV(), meta.Envelope{Event: &meta.CreateTopic{Name: "a/b"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Result.Code != meta.CodeInvalid || len(out.Mutations) != 0 {
		t.Fatalf("outcome %+v", out)
	}
	if !errors.Is(out.Result.Err(), meta.ErrInvalidEvent) {
		t.Fatalf("Err() = %v", out.Result.Err())
	}
}
