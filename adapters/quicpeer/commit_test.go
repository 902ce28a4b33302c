package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var errorsIs = errors.Is

func sampleCommit() ports.CommitRequest {
	return ports.CommitRequest{
		Topic: "orders", TopicID: "0123456789abcdef", Partition: 3,
		Records: []domain.Record{
			{Key: []byte("k1"), Payload: []byte(`{"n":1}`), CommittedAtMs: 1700000000000},
			{Payload: []byte{0, 1, 2, 0xff}},
			{Key: []byte("k3"), Payload: []byte("three"), CommittedAtMs: -1},
		},
	}
}

// ensure that a commit crosses two nodes intact and answers the owner's first offset.
func TestCommitBatchLandsAndReturnsFirstOffset(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	o.committer.first = 41
	p := callerFor(t, o)

	first, err := p.CommitBatch(context.Background(), "owner", sampleCommit())
	if err != nil || first != 41 {
		t.Fatalf("CommitBatch = %d, %v; want 41, nil", first, err)
	}
	if got := o.committer.commits(); len(got) != 1 || !reflect.DeepEqual(got[0], sampleCommit()) {
		t.Fatalf("owner committed %+v, want %+v", got, sampleCommit())
	}
	noID := sampleCommit()
	noID.TopicID = ""
	if _, err := p.CommitBatch(context.Background(), "owner", noID); err != nil {
		t.Fatal(err)
	}
	if got := o.committer.commits()[1]; !reflect.DeepEqual(got, noID) {
		t.Fatalf("batch without an id arrived as %+v", got)
	}
}

// ensure that the owner's refusals come back as the domain sentinels the
// dispatcher's keep-or-discard logic reads (internals.md §3.7, §3.8).
func TestCommitRefusalsMapToDomainSentinels(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	p := callerFor(t, o)
	cases := map[string]struct {
		ownerErr error
		want     error
		keeps    bool
	}{
		"not_owner":          {fmt.Errorf("produce: commit to t/3 on n1: %w", domain.ErrNotOwner), domain.ErrNotOwner, true},
		"topic_not_found":    {fmt.Errorf("produce: incarnation a, live b: %w", domain.ErrTopicNotFound), domain.ErrTopicNotFound, false},
		"unavailable":        {fmt.Errorf("produce: latch: %w", domain.ErrUnavailable), domain.ErrUnavailable, true},
		"partition_range":    {domain.ErrPartitionOutOfRange, domain.ErrPartitionOutOfRange, true},
		"log_poisoned":       {fmt.Errorf("segmentlog: %w", domain.ErrLogPoisoned), domain.ErrLogPoisoned, true},
		"unknown_is_remote":  {errors.New("disk on fire"), ErrRemote, true},
		"refusal_keeps_text": {domain.Refuse(domain.ErrInvalidArgument, "bad thing"), domain.ErrInvalidArgument, true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			o.committer.mu.Lock()
			o.committer.err = c.ownerErr
			o.committer.mu.Unlock()
			_, err := p.CommitBatch(context.Background(), "owner", sampleCommit())
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if dispatcherKeeps(err) != c.keeps {
				t.Fatalf("dispatcher keeps = %v for %v", !c.keeps, err)
			}
			var r *domain.Refusal
			if name == "refusal_keeps_text" && (!errors.As(err, &r) || r.Detail != "bad thing") {
				t.Fatalf("refusal detail lost: %v", err)
			}
		})
	}
}

// ensure that a commit to a peer that is down, to an unknown node, or one
// that times out fails with an error the dispatcher keeps and retries.
func TestCommitTransportFailuresAreRetryable(t *testing.T) {
	t.Parallel()
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := udp.LocalAddr().String()
	_ = udp.Close() // nobody listens there any more
	c, _ := newClient(t, secretA)
	p := NewPeers(c, staticResolver{"down": deadAddr})

	_, err = p.CommitBatch(context.Background(), "down", sampleCommit())
	if !errors.Is(err, ErrUnreachable) && !errors.Is(err, ErrTimeout) {
		t.Fatalf("down peer: %v, want ErrUnreachable or ErrTimeout", err)
	}
	if !dispatcherKeeps(err) {
		t.Fatalf("dispatcher would drop records on %v", err)
	}
	_, err = p.CommitBatch(context.Background(), "stranger", sampleCommit())
	if !errors.Is(err, ErrNoAddress) || !dispatcherKeeps(err) {
		t.Fatalf("unknown node: %v, want ErrNoAddress", err)
	}
}

// ensure that a commit the caller gave up on times out on the caller, is
// retryable, and ends the owner's handler context (§3.8 re-check 3).
func TestCommitTimeoutEndsOwnerHandler(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	o.committer.block = true
	p := callerFor(t, o)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := p.CommitBatch(ctx, "owner", sampleCommit())
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || !dispatcherKeeps(err) {
		t.Fatalf("err = %v, want a retryable ErrTimeout", err)
	}
	select {
	case herr := <-o.committer.ended:
		if herr == nil {
			t.Fatal("handler context ended without an error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("owner's handler context did not end after the caller gave up")
	}
}

// ensure that a batch above the decoder's record cap is refused before it is sent.
func TestCommitAboveRecordCapRefusedLocally(t *testing.T) {
	t.Parallel()
	c, _ := newClient(t, secretA)
	p := NewPeers(c, staticResolver{})
	req := ports.CommitRequest{Topic: "t", Records: make([]domain.Record, commitRecordsMaxCount+1)}
	if _, err := p.CommitBatch(context.Background(), "x", req); !errors.Is(err, domain.ErrRecordTooLarge) {
		t.Fatalf("err = %v", err)
	}
}
