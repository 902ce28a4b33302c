package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ensure that batches of mixed fates (committed, refused 421 not owner,
// refused as another incarnation, refused with a detail, failed on the
// owner) travel as ONE op-37 request and come back, in order, exactly as
// op-11 calls of each alone answer them.
func TestCommitBatchesAnswerAsOp11InOneRequest(t *testing.T) {
	t.Parallel()
	c := newPartitionCommitter(map[int32]error{
		2: fmt.Errorf("produce: commit to orders/2 on n1: %w", domain.ErrNotOwner),
		3: fmt.Errorf("produce: incarnation a, live b: %w", domain.ErrTopicNotFound),
		4: domain.Refuse(domain.ErrInvalidArgument, "bad thing"),
		5: errors.New("disk on fire"),
	}, 0)
	addr, counts := groupOwner(t, c, false, ServerOptions{})
	obs := &recordingObserver{}
	p := ackCaller(t, addr, obs)
	reqs := batchesOf("orders", 1, 2, 3, 4, 5)

	got := p.CommitBatches(context.Background(), "owner", reqs)
	if counts.of(OpCommitProduceBatches) != 1 || counts.of(OpCommitProduceBatch) != 0 {
		t.Fatalf("owner saw %d op-37 and %d op-11 requests, want 1 and 0", counts.of(OpCommitProduceBatches), counts.of(OpCommitProduceBatch))
	}
	if calls := obs.take(); !slices.Equal(calls, []rpcCall{{"commit_produce_batches", OutcomeOK}}) {
		t.Fatalf("observed %v, want one commit_produce_batches", calls)
	}
	if committed := c.commits(); !reflect.DeepEqual(committed, reqs) {
		t.Fatalf("owner committed %+v, want %+v", committed, reqs)
	}
	if len(got) != len(reqs) {
		t.Fatalf("%d outcomes for %d batches", len(got), len(reqs))
	}
	for i, req := range reqs {
		var want ports.CommitOutcome
		want.First, want.Err = p.CommitBatch(context.Background(), "owner", req)
		sameOutcome(t, fmt.Sprintf("batch %d", i), got[i], want)
	}
	if got[0].Err != nil || got[0].First != 10 || !errors.Is(got[1].Err, domain.ErrNotOwner) || !errors.Is(got[2].Err, domain.ErrTopicNotFound) {
		t.Fatalf("outcomes %+v", got)
	}
}

// ensure that an owner without op 37 (an older release answering it as an
// unknown op) gets the batches as op-11 calls, answered as usual; later
// groups go straight to op 11 for 2 min, and op 37 is tried again after
// that (internals.md §10.3).
func TestCommitBatchesOlderOwnerGetsOp11ForTwoMinutes(t *testing.T) {
	t.Parallel()
	c := newPartitionCommitter(map[int32]error{2: domain.ErrNotOwner}, 0)
	addr, counts := groupOwner(t, c, true, ServerOptions{})
	obs := &recordingObserver{}
	clock := fake.NewClock(time.Unix(1_700_000_000, 0))
	p := ackCaller(t, addr, obs, withClock(clock.Now))
	commit := func(parts ...int32) []ports.CommitOutcome {
		t.Helper()
		got := p.CommitBatches(context.Background(), "owner", batchesOf("t", parts...))
		for i, part := range parts {
			if (part == 2) != errors.Is(got[i].Err, domain.ErrNotOwner) || (part != 2 && (got[i].Err != nil || got[i].First != int64(part)*10)) {
				t.Fatalf("batch %d: %d, %v", part, got[i].First, got[i].Err)
			}
		}
		return got
	}
	op11, op37 := rpcCall{"commit_produce_batch", OutcomeOK}, rpcCall{"commit_produce_batches", OutcomeRejected}

	commit(0, 1, 2)
	if calls := obs.take(); len(calls) != 4 || calls[0] != op37 || count(calls, op11) != 2 {
		t.Fatalf("first call observed %v, want a rejected op 37 then three op 11", calls)
	}
	clock.Advance(legacyPeerMemory - time.Second)
	commit(3, 4)
	if calls := obs.take(); !slices.Equal(calls, []rpcCall{op11, op11}) {
		t.Fatalf("within 2 min observed %v, want two op 11 and no op 37", calls)
	}
	clock.Advance(time.Second)
	commit(5, 6)
	if calls := obs.take(); len(calls) != 3 || calls[0] != op37 {
		t.Fatalf("after 2 min observed %v, want op 37 tried again", calls)
	}
	if n := counts.of(OpCommitProduceBatch); n != 7 || len(c.commits()) != 7 {
		t.Fatalf("owner saw %d op-11 requests and was asked to commit %d batches, want 7 and 7", n, len(c.commits()))
	}
}

// ensure that batches op 37 cannot carry (too large for any frame, above
// the record cap) are refused before sending exactly as op 11 alone
// refuses them, never reach the owner and do not spoil the others, which
// still go as one op-37 request; a group of such batches sends nothing.
// Not parallel: encoding 16 MiB batches under the race detector would
// starve the dials of the other tests.
func TestCommitBatchesTooLargeRefusedBeforeSending(t *testing.T) {
	c := newPartitionCommitter(nil, 0)
	addr, counts := groupOwner(t, c, false, ServerOptions{})
	p := ackCaller(t, addr, &recordingObserver{})
	reqs := batchesOf("t", 0, 1, 2, 3)
	reqs[1].Records = []domain.Record{{Payload: make([]byte, framePayloadMaxBytes)}}
	reqs[2].Records = make([]domain.Record, commitRecordsMaxCount+1)

	huge := []ports.CommitRequest{reqs[1], reqs[1]}
	huge[1].Partition = 7
	for i, out := range p.CommitBatches(context.Background(), "owner", huge) {
		wantClass(t, fmt.Sprintf("oversized batch %d", i), out.Err, domain.ErrNotSent)
		if !errors.Is(out.Err, ErrFrameTooLarge) {
			t.Fatalf("oversized batch %d: %v, want ErrFrameTooLarge", i, out.Err)
		}
	}
	if counts.of(OpCommitProduceBatches)+counts.of(OpCommitProduceBatch) != 0 {
		t.Fatal("a request too large for the frame reached the owner")
	}
	got := p.CommitBatches(context.Background(), "owner", reqs)
	for i, req := range reqs {
		var want ports.CommitOutcome
		want.First, want.Err = p.CommitBatch(context.Background(), "owner", req)
		sameOutcome(t, fmt.Sprintf("batch %d", i), got[i], want)
	}
	if !errors.Is(got[1].Err, ErrFrameTooLarge) || !errors.Is(got[2].Err, domain.ErrRecordTooLarge) {
		t.Fatalf("oversized outcomes %v, %v", got[1].Err, got[2].Err)
	}
	if counts.of(OpCommitProduceBatches) != 1 || counts.of(OpCommitProduceBatch) != 2 || len(c.commits()) != 4 {
		t.Fatalf("owner saw %d op-37 and %d op-11 requests, committed %d", counts.of(OpCommitProduceBatches), counts.of(OpCommitProduceBatch), len(c.commits()))
	}
}

// ensure that a caller whose context ends while the owner works gets a
// no-answer timeout in every outcome (the records are kept), and that the
// owner's commits of that request all see their context end (§3.8
// re-check 3).
func TestCommitBatchesCallerGivesUp(t *testing.T) {
	t.Parallel()
	c := newPartitionCommitter(nil, 0)
	addr, counts := groupOwner(t, c, false, ServerOptions{})
	p := ackCaller(t, addr, &recordingObserver{})
	if _, err := p.CommitBatch(context.Background(), "owner", sampleCommit()); err != nil {
		t.Fatal(err) // the connection is up: the group below surely leaves
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()

	got := p.CommitBatches(ctx, "owner", batchesOf("hold", 0, 1, 2))
	for i, out := range got {
		wantClass(t, fmt.Sprintf("batch %d", i), out.Err, domain.ErrNoAnswer)
		if !errors.Is(out.Err, ErrTimeout) || !errors.Is(out.Err, context.DeadlineExceeded) || !dispatcherKeeps(out.Err) {
			t.Fatalf("batch %d: %v, want a kept timeout", i, out.Err)
		}
	}
	waitFor(t, "the owner's three commits ended", func() bool { return c.ended.Load() == 3 })
	if counts.of(OpCommitProduceBatches) != 1 {
		t.Fatalf("owner saw %d op-37 requests, want 1", counts.of(OpCommitProduceBatches))
	}
}

// ensure that an op-37 call that reaches no owner (an unknown node) fails
// every outcome with its transport error, observed as one call.
func TestCommitBatchesTransportFailureInEveryOutcome(t *testing.T) {
	t.Parallel()
	obs := &recordingObserver{}
	c, _ := newClient(t, secretA)
	p := NewPeers(c, staticResolver{}, WithObserver(obs))
	got := p.CommitBatches(context.Background(), "stranger", batchesOf("t", 0, 1, 2))
	for i, out := range got {
		wantClass(t, fmt.Sprintf("batch %d", i), out.Err, domain.ErrNotSent)
		if !errors.Is(out.Err, ErrNoAddress) || out.Err != got[0].Err {
			t.Fatalf("batch %d: %v, want the call's ErrNoAddress", i, out.Err)
		}
	}
	if calls := obs.take(); !slices.Equal(calls, []rpcCall{{"commit_produce_batches", OutcomeError}}) {
		t.Fatalf("observed %v, want one failed commit_produce_batches", calls)
	}
}

// ensure that the batches are planned into as few op-37 requests as the
// frame and the count cap allow, in order, with a batch op 37 cannot
// carry (over the record cap, a name over the wire cap, too large for a
// request of its own) alone, and a request exactly at the frame cap kept
// whole.
func TestPlanCommitGroups(t *testing.T) {
	t.Parallel()
	big := make([]byte, framePayloadMaxBytes)
	sized := func(payload int) ports.CommitRequest {
		return ports.CommitRequest{Topic: "t", Records: []domain.Record{{Payload: big[:payload]}}}
	}
	small := sized(10)
	tooMany := ports.CommitRequest{Topic: "t", Records: make([]domain.Record, commitRecordsMaxCount+1)}
	longName := ports.CommitRequest{Topic: string(make([]byte, wireNameMaxBytes+1))}
	// two batches that fill a frame to its last byte
	half := sized(8 << 20)
	rest := sized(framePayloadMaxBytes - 1 - commitGroupCountBytes - commitGroupItemSize(half) - commitGroupItemSize(sized(0)))
	many := slices.Repeat([]ports.CommitRequest{small}, commitGroupMaxCount+2)

	for name, c := range map[string]struct {
		reqs []ports.CommitRequest
		want [][]int
	}{
		"one":          {[]ports.CommitRequest{small}, [][]int{{0}}},
		"all in one":   {[]ports.CommitRequest{small, small, small}, [][]int{{0, 1, 2}}},
		"exactly full": {[]ports.CommitRequest{half, rest}, [][]int{{0, 1}}},
		"a byte over":  {[]ports.CommitRequest{half, sized(len(rest.Records[0].Payload) + 1)}, [][]int{{0}, {1}}},
		"split by size": {[]ports.CommitRequest{sized(6 << 20), sized(6 << 20), sized(6 << 20), tooMany, small, sized(framePayloadMaxBytes), longName},
			[][]int{{0, 1}, {3}, {5}, {6}, {2, 4}}},
		"split by count": {many, [][]int{seq(0, commitGroupMaxCount), {commitGroupMaxCount, commitGroupMaxCount + 1}}},
	} {
		if got := planCommitGroups(c.reqs); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: planned %v, want %v", name, got, c.want)
		}
	}
	if n := 1 + commitGroupSize([]ports.CommitRequest{half, rest}); n != framePayloadMaxBytes {
		t.Fatalf("the full request is %d bytes, want the %d cap", n, framePayloadMaxBytes)
	}
}

// seq is from, from+1, ..., to-1.
func seq(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}
