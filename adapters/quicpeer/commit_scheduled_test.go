package quicpeer

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

func scheduledCommit() ports.CommitRequest {
	req := sampleCommit()
	req.Records[0].DeliverAtMs = 1_800_000_000_000
	req.Records[2].DeliverAtMs = 1_800_000_060_000
	return req
}

// ensure that a batch holding a scheduled record crosses to its owner as
// op 40 with every deliver-at, alone and inside a group of batches, and
// that an owner without op 40 refuses it as unsupported with nothing
// committed (never committed early).
func TestCommitScheduledCrossesAsItsOwnOp(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	p := callerFor(t, o)
	if _, err := p.CommitBatch(context.Background(), "owner", scheduledCommit()); err != nil {
		t.Fatal(err)
	}
	outs := p.CommitBatches(context.Background(), "owner", []ports.CommitRequest{sampleCommit(), scheduledCommit(), sampleCommit()})
	for i, out := range outs {
		if out.Err != nil {
			t.Fatalf("batch %d: %v", i, out.Err)
		}
	}
	got := o.committer.commits()
	if len(got) != 4 || !reflect.DeepEqual(got[0], scheduledCommit()) {
		t.Fatalf("owner committed %+v", got)
	}
	n := 0
	for _, c := range got[1:] {
		if reflect.DeepEqual(c, scheduledCommit()) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the grouped scheduled batch arrived %d times intact", n)
	}

	srv, _ := newServer(t, ServerOptions{})
	old := &fakeCommitter{ended: make(chan error, 1)}
	registerCommitBatch(srv, old) // a release before op 40
	c, _ := newClient(t, secretA)
	q := NewPeers(c, staticResolver{"owner": srv.Addr().String()})
	if _, err := q.CommitBatch(context.Background(), "owner", scheduledCommit()); !errors.Is(err, ErrUnsupportedOp) {
		t.Fatalf("an older owner answered %v", err)
	}
	if len(old.commits()) != 0 {
		t.Fatal("an older owner committed a scheduled batch")
	}
}

// ensure that op 40's request refuses a negative deliver-at, a count that
// differs from the batch's and a broken op-11 part with ErrBadPayload.
func TestCommitScheduledCodecRefusals(t *testing.T) {
	t.Parallel()
	good := appendCommitScheduled(nil, scheduledCommit())
	if got, err := decodeCommitScheduled(good); err != nil || !reflect.DeepEqual(got, scheduledCommit()) {
		t.Fatalf("round trip %+v, %v", got, err)
	}
	neg := scheduledCommit()
	neg.Records[1].DeliverAtMs = -5
	short := appendU32(nil, 2)
	short = appendI64(appendI64(short, 1), 2)
	short = appendCommitRequest(short, scheduledCommit())
	for name, b := range map[string][]byte{
		"negative":  appendCommitScheduled(nil, neg),
		"miscount":  short,
		"truncated": good[:len(good)-1],
		"empty":     nil,
	} {
		if _, err := decodeCommitScheduled(b); !errors.Is(err, ErrBadPayload) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzCommitScheduledRequest ensures that op 40's decoder never panics,
// refuses only with ErrBadPayload, and that what it accepts re-encodes to a
// batch that decodes the same.
func FuzzCommitScheduledRequest(f *testing.F) {
	f.Add(appendCommitScheduled(nil, scheduledCommit()))
	f.Add(appendCommitScheduled(nil, ports.CommitRequest{Topic: "t", Records: []domain.Record{{Payload: []byte("x"), DeliverAtMs: 1}}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := decodeCommitScheduled(data)
		if err != nil {
			if !errors.Is(err, ErrBadPayload) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		again, err := decodeCommitScheduled(appendCommitScheduled(nil, req))
		if err != nil || !reflect.DeepEqual(again, req) {
			t.Fatalf("re-encoding decoded as %+v, %v; want %+v", again, err, req)
		}
	})
}
