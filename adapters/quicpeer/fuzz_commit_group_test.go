package quicpeer

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// FuzzCommitGroupRequest ensures that the op-37 request decoder never
// panics, refuses only with ErrBadPayload, never returns more batches,
// records or key and payload bytes than its input can hold, and that what
// it accepts re-encodes to a request that decodes the same.
func FuzzCommitGroupRequest(f *testing.F) {
	noID := sampleCommit()
	noID.TopicID = ""
	f.Add(appendCommitGroup(nil, []ports.CommitRequest{sampleCommit()}))
	f.Add(appendCommitGroup(nil, []ports.CommitRequest{sampleCommit(), noID, {Topic: "t"}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs, err := decodeCommitGroup(data)
		if !acceptedList(t, err, len(reqs), commitGroupItemMinBytes, data) {
			return
		}
		records, held := 0, 0
		for _, req := range reqs {
			records += len(req.Records)
			for _, r := range req.Records {
				held += len(r.Key) + len(r.Payload)
			}
		}
		if records*recordWireMinBytes+held > len(data) {
			t.Fatalf("%d records of %d bytes from %d bytes of input", records, held, len(data))
		}
		again, err := decodeCommitGroup(appendCommitGroup(nil, reqs))
		if err != nil || !reflect.DeepEqual(again, reqs) {
			t.Fatalf("re-encoding decoded as %+v, %v; want %+v", again, err, reqs)
		}
	})
}

// FuzzCommitGroupReply ensures that the op-37 reply-body decoder never
// panics, refuses only with ErrBadPayload, never returns more items than
// its input can hold, keeps every byte (what it accepts re-encodes to its
// input), and that every item reads as an op-11 reply does: a success
// only from a success reply with an offset, otherwise a refusal sentinel
// or no answer, never "not sent".
func FuzzCommitGroupReply(f *testing.F) {
	f.Add(appendCommitGroupReply(nil, [][]byte{commitReply(41, nil)}))
	f.Add(appendCommitGroupReply(nil, [][]byte{
		commitReply(7, nil), commitReply(0, domain.ErrNotOwner), commitReply(0, domain.Refuse(domain.ErrInvalidArgument, "why")),
	}))
	f.Fuzz(func(t *testing.T, data []byte) {
		items, err := decodeCommitGroupReply(data)
		if !acceptedList(t, err, len(items), commitGroupReplyItemMinBytes, data) {
			return
		}
		if again := appendCommitGroupReply(nil, items); !bytes.Equal(again, data) {
			t.Fatalf("re-encoded % x, want % x", again, data)
		}
		for i, item := range items {
			checkCommitItem(t, i, item)
		}
	})
}

// acceptedList reports whether an op-37 decoder accepted data, failing t
// on a refusal that is not ErrBadPayload, or on an accepted list of n
// items of minBytes each that is empty, above the cap or more than data
// holds.
func acceptedList(t *testing.T, err error, n, minBytes int, data []byte) bool {
	t.Helper()
	switch {
	case err != nil && !errors.Is(err, ErrBadPayload):
		t.Fatalf("unclassified error: %v", err)
	case err != nil:
		return false
	case n == 0 || n > commitGroupMaxCount || n*minBytes > len(data):
		t.Fatalf("%d items from %d bytes", n, len(data))
	}
	return true
}

// checkCommitItem fails unless item's outcome is what its reply says.
func checkCommitItem(t *testing.T, i int, item []byte) {
	t.Helper()
	out := commitItemOutcome(item, "peer")
	rp, decodeErr := decodeReply(item)
	switch {
	case out.Err == nil && (decodeErr != nil || rp.code != "" || len(rp.body) != 8):
		t.Fatalf("item %d: success from % x", i, item)
	case out.Err != nil && out.First != 0:
		t.Fatalf("item %d: offset %d beside %v", i, out.First, out.Err)
	case errors.Is(out.Err, domain.ErrNotSent):
		t.Fatalf("item %d: an answered batch reads as not sent: %v", i, out.Err)
	case out.Err != nil && !errors.Is(out.Err, domain.ErrNoAnswer) && !refusalSentinel(out.Err):
		t.Fatalf("item %d: neither a refusal nor no answer: %v", i, out.Err)
	}
}

// refusalSentinel reports whether err is one of the owner refusals.
func refusalSentinel(err error) bool {
	for _, row := range refusalTable {
		if errors.Is(err, row.err) {
			return true
		}
	}
	return false
}
