package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// rpcCall is one observation.
type rpcCall struct{ op, outcome string }

// recordingObserver keeps every observation.
type recordingObserver struct {
	mu    sync.Mutex
	calls []rpcCall
}

func (o *recordingObserver) RPCDone(op, outcome string, took time.Duration) {
	if took < 0 {
		panic("negative round trip")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, rpcCall{op, outcome})
}

// take returns and forgets the observations so far.
func (o *recordingObserver) take() []rpcCall {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := o.calls
	o.calls = nil
	return out
}

// ensure that every call through Peers is observed exactly once on the
// caller with its op and outcome (internals.md §10.3 RPC metrics; api.md §7
// outcome values): a success ok, an owner's 4xx refusal or an op it does
// not know rejected, an owner's 5xx failed, a passed deadline timeout, a
// call that reached no owner error; a batch of acks is ack_batch, apart
// from ack.
func TestPeersObserveEveryCallOnce(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	obs := &recordingObserver{}
	c, _ := newClient(t, secretA)
	old, _ := newServer(t, ServerOptions{}) // serves no op at all: an older release
	p := NewPeers(c, staticResolver{"owner": o.srv.Addr().String(), "old": old.Addr().String()}, WithObserver(obs))
	ctx := context.Background()
	setCommitErr := func(err error) {
		o.committer.mu.Lock()
		defer o.committer.mu.Unlock()
		o.committer.err = err
	}
	hs := []domain.ReceiptHandle{{Partition: 0, Offset: 1, Nonce: 2}, {Partition: 0, Offset: 2, Nonce: 3}}
	steps := []struct {
		name string
		run  func()
		want rpcCall
	}{
		{"commit_ok", func() { _, _ = p.CommitBatch(ctx, "owner", sampleCommit()) }, rpcCall{"commit_produce_batch", OutcomeOK}},
		{"commit_not_owner", func() {
			setCommitErr(fmt.Errorf("x: %w", domain.ErrNotOwner))
			_, _ = p.CommitBatch(ctx, "owner", sampleCommit())
		}, rpcCall{"commit_produce_batch", OutcomeRejected}},
		{"commit_unavailable", func() {
			setCommitErr(fmt.Errorf("x: %w", domain.ErrUnavailable))
			_, _ = p.CommitBatch(ctx, "owner", sampleCommit())
		}, rpcCall{"commit_produce_batch", OutcomeFailed}},
		{"ack", func() { _, _ = p.SettleRemote(ctx, "owner", "t", hs[:1], ports.SettleAck) }, rpcCall{"ack", OutcomeOK}},
		{"ack_batch", func() { _, _ = p.SettleRemote(ctx, "owner", "t", hs, ports.SettleAck) }, rpcCall{"ack_batch", OutcomeOK}},
		{"nack", func() { _, _ = p.SettleRemote(ctx, "owner", "t", hs[:1], ports.SettleNack) }, rpcCall{"nack", OutcomeOK}},
		{"unknown_op", func() { _, _ = p.PartitionStats(ctx, "old", "t", "", []int32{0}) }, rpcCall{"topic_partition_stats", OutcomeRejected}},
		{"no_address", func() { _, _ = p.PartitionStats(ctx, "stranger", "t", "", []int32{0}) }, rpcCall{"topic_partition_stats", OutcomeError}},
	}
	for _, s := range steps {
		s.run()
		if got := obs.take(); len(got) != 1 || got[0] != s.want {
			t.Fatalf("%s: observed %+v, want exactly %+v", s.name, got, s.want)
		}
	}
}

// ensure that a call whose deadline passes before the owner answers is
// observed once as a timeout.
func TestPeersObserveTimeout(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	o.committer.block = true
	obs := &recordingObserver{}
	c, _ := newClient(t, secretA)
	p := NewPeers(c, staticResolver{"owner": o.srv.Addr().String()}, WithObserver(obs))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := p.CommitBatch(ctx, "owner", sampleCommit()); !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if got := obs.take(); len(got) != 1 || got[0] != (rpcCall{"commit_produce_batch", OutcomeTimeout}) {
		t.Fatalf("observed %+v, want one timeout", got)
	}
}

// ensure that the outcome of a call that got no reply follows its error
// (the cases the socket tests cannot stage cheaply).
func TestRPCOutcomeWithoutReply(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		err  error
		want string
	}{
		"deadline":      {fmt.Errorf("%w: %w", ErrTimeout, context.DeadlineExceeded), OutcomeTimeout},
		"bare_deadline": {context.DeadlineExceeded, OutcomeTimeout},
		"cancelled":     {context.Canceled, OutcomeError},
		"unreachable":   {fmt.Errorf("x: %w", ErrUnreachable), OutcomeError},
		"auth":          {ErrAuth, OutcomeError},
		"bad_reply":     {fmt.Errorf("x: %w", ErrBadPayload), OutcomeError},
		"handler_error": {&RemoteError{Message: "internal error"}, OutcomeFailed},
		"unknown_op":    {&RemoteError{Message: msgUnsupportedOp}, OutcomeRejected},
	}
	for name, c := range cases {
		if got := rpcOutcome(0, c.err); got != c.want {
			t.Errorf("%s: %s, want %s", name, got, c.want)
		}
	}
	for status, want := range map[uint16]string{200: OutcomeOK, 204: OutcomeOK, 404: OutcomeRejected, 421: OutcomeRejected, 503: OutcomeFailed, 500: OutcomeFailed} {
		if got := rpcOutcome(status, nil); got != want {
			t.Errorf("status %d: %s, want %s", status, got, want)
		}
	}
}

// ensure that every operation has its own op label, so no two ops share a
// series (ack_batch apart from ack), and a byte no op has is "unknown".
func TestOpLabelsAreDistinct(t *testing.T) {
	t.Parallel()
	seen := map[string]Op{}
	for op := OpProduce; op <= OpTokenPush; op++ {
		l := OpLabel(op)
		if l == opLabelUnknown {
			t.Fatalf("op %d has no label", op)
		}
		if other, dup := seen[l]; dup {
			t.Fatalf("ops %d and %d share label %q", other, op, l)
		}
		seen[l] = op
	}
	if OpLabel(0) != opLabelUnknown || OpLabel(OpTokenPush+1) != opLabelUnknown {
		t.Fatal("a byte no op has got a label")
	}
}
