package quicpeer

import (
	"errors"
	"reflect"
	"testing"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

func sampleJoin() ports.JoinRequest {
	return ports.JoinRequest{NodeID: "n4", RaftAddr: "10.0.0.4:7943", DataDirEmpty: true, EntryTypes: meta.AppliesThroughType}
}

// ensure that every field of a join request crosses the wire (story F11:
// no field forgotten by the RPC codec).
func TestJoinRequestFieldParity(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeOf(ports.JoinRequest{})
	for i := range typ.NumField() {
		var req ports.JoinRequest
		setNonZero(t, typ.Field(i).Name, reflect.ValueOf(&req).Elem().Field(i))
		got, err := decodeJoinRequest(appendJoinRequest(nil, req))
		if err != nil || got != req {
			t.Errorf("field %s: sent %+v, got %+v (%v)", typ.Field(i).Name, req, got, err)
		}
	}
}

// ensure that a request without the trailing entry type (a 3.0.x joiner,
// internals.md §9.3) decodes as the legacy set, and that every other
// prefix and any extra byte are refused with ErrBadPayload.
func TestJoinRequestRefusesTruncationAndTrailingBytes(t *testing.T) {
	t.Parallel()
	enc := appendJoinRequest(nil, sampleJoin())
	legacy := sampleJoin()
	legacy.EntryTypes = 0
	for n := range enc {
		got, err := decodeJoinRequest(enc[:n])
		if n == len(enc)-1 {
			if err != nil || got != legacy {
				t.Fatalf("request without entry types: %+v, %v", got, err)
			}
			continue
		}
		if !errors.Is(err, ErrBadPayload) {
			t.Fatalf("prefix of %d/%d bytes: %+v, %v", n, len(enc), got, err)
		}
	}
	if _, err := decodeJoinRequest(append(enc, 0)); !errors.Is(err, ErrBadPayload) {
		t.Fatalf("trailing byte: %v", err)
	}
	if _, err := decodeJoinRequest(appendU32(nil, wireNameMaxBytes+1)); !errors.Is(err, ErrBadPayload) {
		t.Fatalf("oversized node id: %v", err)
	}
}

// ensure that each answer of internals.md §9.3 crosses the wire as the
// joiner reads it: 200 with its status, 421 naming the leader, 412, 409
// tombstoned and older_release, 503 and 400 as their domain sentinels.
func TestJoinAnswersRoundTrip(t *testing.T) {
	t.Parallel()
	for _, st := range []string{ports.JoinStaged, ports.JoinDeferred, ports.JoinPromoted, ports.JoinVoter} {
		want := ports.JoinAdmission{Status: st, Reason: "r-" + st}
		got, err := roundTripAnswer(t, want, nil)
		if err != nil || got != want {
			t.Fatalf("status %s: %+v, %v", st, got, err)
		}
	}
	hint := &domain.NotLeaderError{LeaderID: "n2", LeaderAddr: "10.0.0.2:7942"}
	_, err := roundTripAnswer(t, ports.JoinAdmission{}, hint)
	var nl *domain.NotLeaderError
	if !errors.As(err, &nl) || *nl != *hint || !errors.Is(err, domain.ErrNotMetaLeader) {
		t.Fatalf("421: %v", err)
	}
	for _, sentinel := range []error{domain.ErrNoCluster, domain.ErrJoinTombstoned, domain.ErrOlderRelease,
		domain.ErrUnavailable, domain.ErrInvalidArgument, domain.ErrNotMetaLeader} {
		if _, err := roundTripAnswer(t, ports.JoinAdmission{}, sentinel); !errors.Is(err, sentinel) {
			t.Fatalf("refusal %v came back as %v", sentinel, err)
		}
	}
}

// ensure that the 421 body is the one internals.md §9.3 names.
func TestJoinNotLeaderBodyShape(t *testing.T) {
	t.Parallel()
	rp, err := decodeReply(joinReply(ports.JoinAdmission{}, &domain.NotLeaderError{LeaderID: "n1", LeaderAddr: "h:1"}))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"error":"not the metastore leader","leader_id":"n1","leader_addr":"h:1"}`
	if rp.status != 421 || string(rp.body) != want {
		t.Fatalf("421 reply: %d %s", rp.status, rp.body)
	}
}

// ensure that answer bodies decode strictly: unknown fields, a second
// value, an unknown status and non-JSON are refused with ErrBadPayload; a
// 3.0.x leader's "joined" reads as voter.
func TestJoinAnswerBodiesDecodeStrictly(t *testing.T) {
	t.Parallel()
	bad := map[string]reply{
		"unknown_field":  {status: 200, body: []byte(`{"status":"voter","extra":1}`)},
		"second_value":   {status: 200, body: []byte(`{"status":"voter"} {}`)},
		"unknown_status": {status: 200, body: []byte(`{"status":"admitted"}`)},
		"not_json":       {status: 200, body: []byte(`voter`)},
		"empty":          {status: 200},
		"hint_not_json":  {status: 421, code: codeNotLeader, body: []byte(`{"leader_id":`)},
	}
	for name, rp := range bad {
		if _, err := decodeJoinAnswer(rp, "peer"); !errors.Is(err, ErrBadPayload) {
			t.Errorf("%s: %v", name, err)
		}
	}
	got, err := decodeJoinAnswer(reply{status: 200, body: []byte(`{"status":"joined"}`)}, "peer")
	if err != nil || got.Status != ports.JoinVoter {
		t.Fatalf("legacy joined: %+v, %v", got, err)
	}
}

func roundTripAnswer(t *testing.T, a ports.JoinAdmission, refusal error) (ports.JoinAdmission, error) {
	t.Helper()
	rp, err := decodeReply(joinReply(a, refusal))
	if err != nil {
		t.Fatalf("reply envelope: %v", err)
	}
	return decodeJoinAnswer(rp, "peer")
}
