package quicpeer

import (
	"context"
	"testing"
	"time"

	"github.com/narad/narad/ports"
)

// callCommitGroup sends payload to the owner at addr as one raw op-37
// request, from a client of its own, and returns the reply envelope.
func callCommitGroup(t *testing.T, ctx context.Context, addr string, payload []byte) reply {
	t.Helper()
	c, _ := newClient(t, secretA)
	raw, err := c.Call(ctx, addr, OpCommitProduceBatches, payload)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := decodeReply(raw)
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

// ensure that the owner commits an op-37 request's batches concurrently,
// under ONE commit slot: with a single slot and a committer that lets no
// batch through until all of them arrived, every batch is committed and
// answered, in request order, as op 11 answers a commit.
func TestCommitGroupOwnerRunsBatchesConcurrently(t *testing.T) {
	t.Parallel()
	parts := []int32{7, 3, 9, 5}
	c := newPartitionCommitter(nil, int32(len(parts)))
	addr, counts := groupOwner(t, c, false, ServerOptions{MaxHandlers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	rp := callCommitGroup(t, ctx, addr, appendCommitGroup(nil, batchesOf("t", parts...)))
	items, err := decodeCommitGroupReply(rp.body)
	if rp.status != statusOK || err != nil || len(items) != len(parts) {
		t.Fatalf("reply %+v: %d items, %v", rp, len(items), err)
	}
	for i, part := range parts {
		if out := commitItemOutcome(items[i], "owner"); out != (ports.CommitOutcome{First: int64(part) * 10}) {
			t.Fatalf("item %d: %+v, want first offset %d", i, out, part*10)
		}
	}
	if counts.of(OpCommitProduceBatches) != 1 {
		t.Fatalf("owner saw %d op-37 requests, want 1", counts.of(OpCommitProduceBatches))
	}
}

// ensure that a malformed op-37 request (truncated, trailing bytes, a
// count the payload cannot hold or above the cap, no batch, one malformed
// batch) is refused whole with 400 and nothing of it is committed.
func TestCommitGroupMalformedRequestRefusedWhole(t *testing.T) {
	t.Parallel()
	c := newPartitionCommitter(nil, 0)
	addr, counts := groupOwner(t, c, false, ServerOptions{})
	for name, payload := range malformedCommitGroups() {
		if rp := callCommitGroup(t, context.Background(), addr, payload); rp.status != statusBadRequest || rp.code != codeBadPayload {
			t.Fatalf("%s: reply %+v, want 400 %s", name, rp, codeBadPayload)
		}
	}
	if n := counts.of(OpCommitProduceBatches); n != len(malformedCommitGroups()) || c.arrived.Load() != 0 {
		t.Fatalf("owner saw %d requests and committed %d batches", n, c.arrived.Load())
	}
}
