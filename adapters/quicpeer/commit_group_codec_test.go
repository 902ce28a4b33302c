package quicpeer

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ensure that an op-37 request is its count and each batch's exact op-11
// payload as a byte string, of the size commitGroupSize says, and decodes
// to the batches it was made of.
func TestCommitGroupRequestLayout(t *testing.T) {
	t.Parallel()
	noID := sampleCommit()
	noID.TopicID = ""
	reqs := []ports.CommitRequest{sampleCommit(), noID, {Topic: "t", Partition: -1, Records: []domain.Record{}}}
	want := appendU32(nil, 3)
	for _, req := range reqs {
		want = appendBytes(want, appendCommitRequest(nil, req))
	}
	got := appendCommitGroup(nil, reqs)
	if !bytes.Equal(got, want) || len(got) != commitGroupSize(reqs) {
		t.Fatalf("encoded % x (%d bytes, size says %d), want % x", got, len(got), commitGroupSize(reqs), want)
	}
	back, err := decodeCommitGroup(got)
	if err != nil || !reflect.DeepEqual(back, reqs) {
		t.Fatalf("decoded %+v, %v; want %+v", back, err, reqs)
	}
}

// ensure that both op-37 decoders refuse, with ErrBadPayload, every
// malformed shape: the request ones an owner refuses on the wire, and a
// reply body that is truncated, trailing, empty or counts past its bytes
// or its cap (checked before anything is allocated for the count).
func TestCommitGroupDecodersRefuseMalformed(t *testing.T) {
	t.Parallel()
	for name, p := range malformedCommitGroups() {
		if _, err := decodeCommitGroup(p); !errors.Is(err, ErrBadPayload) {
			t.Errorf("request %s: %v, want ErrBadPayload", name, err)
		}
	}
	item := commitReply(41, nil)
	valid := appendCommitGroupReply(nil, [][]byte{item, item})
	capped := appendU32(nil, commitGroupMaxCount+1)
	for range commitGroupMaxCount + 1 {
		capped = appendBytes(capped, item)
	}
	for name, body := range map[string][]byte{
		"truncated":      valid[:len(valid)-1],
		"trailing byte":  append(slices.Clone(valid), 0),
		"no item":        appendU32(nil, 0),
		"empty":          nil,
		"count past end": append(appendU32(nil, 3), valid[4:]...),
		"count over cap": capped,
	} {
		if _, err := decodeCommitGroupReply(body); !errors.Is(err, ErrBadPayload) {
			t.Errorf("reply %s: %v, want ErrBadPayload", name, err)
		}
	}
}

// ensure that an op-37 reply item is read exactly as a whole op-11 reply:
// a success its first offset, a refusal its sentinel, an item that is no
// reply, or a success without an offset, no answer.
func TestCommitItemOutcomeReadsOp11Replies(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		item  []byte
		first int64
		want  error
	}{
		"committed":   {commitReply(41, nil), 41, nil},
		"not owner":   {commitReply(0, domain.ErrNotOwner), 0, domain.ErrNotOwner},
		"incarnation": {commitReply(0, domain.ErrTopicNotFound), 0, domain.ErrTopicNotFound},
		"unavailable": {commitReply(0, domain.ErrUnavailable), 0, domain.ErrUnavailable},
		"unknown":     {commitReply(0, errors.New("disk on fire")), 0, domain.ErrNoAnswer},
		"not a reply": {[]byte{0, 200}, 0, domain.ErrNoAnswer},
		"no offset":   {okReply(nil), 0, domain.ErrNoAnswer},
	} {
		out := commitItemOutcome(c.item, "owner")
		if out.First != c.first || (c.want == nil) != (out.Err == nil) || !errors.Is(out.Err, c.want) {
			t.Errorf("%s: %d, %v; want %d, %v", name, out.First, out.Err, c.first, c.want)
		}
	}
}

// batchesOf returns one sample batch per partition of parts, on topic.
func batchesOf(topic string, parts ...int32) []ports.CommitRequest {
	reqs := make([]ports.CommitRequest, len(parts))
	for i, part := range parts {
		reqs[i] = sampleCommit()
		reqs[i].Topic, reqs[i].Partition = topic, part
	}
	return reqs
}

// malformedCommitGroups are op-37 requests an owner must refuse whole.
func malformedCommitGroups() map[string][]byte {
	valid := appendCommitGroup(nil, batchesOf("t", 0, 1))
	recount := func(n uint32) []byte { return append(appendU32(nil, n), valid[4:]...) }
	badBatch := appendU32(nil, 2)
	badBatch = appendBytes(badBatch, appendCommitRequest(nil, sampleCommit()))
	badBatch = appendBytes(badBatch, append(appendCommitRequest(nil, sampleCommit()), 0xff))
	return map[string][]byte{
		"truncated":        valid[:len(valid)-1],
		"trailing byte":    append(slices.Clone(valid), 0),
		"count 3 of 2":     recount(3),
		"count past end":   recount(commitGroupMaxCount),
		"count over cap":   recount(commitGroupMaxCount + 1),
		"no batch":         appendU32(nil, 0),
		"empty payload":    nil,
		"a batch trailing": badBatch,
		"item past end":    append(appendU32(appendU32(nil, 1), 1<<20), valid[8:]...),
	}
}
