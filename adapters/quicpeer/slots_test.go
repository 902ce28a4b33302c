package quicpeer

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/ports"
)

// ensure that ops are classed as internals.md §10.3 says: commits apart
// from messaging, a consume probe or a consume without a wait a scan, the
// transfer reads under their own bound of 8, a long poll and the control
// ops under no bound.
func TestSlotClassOf(t *testing.T) {
	t.Parallel()
	poll := appendConsumeRequest(nil, ports.RemoteConsume{Topic: "t", Wait: 5 * time.Second})
	probe := appendConsumeRequest(nil, ports.RemoteConsume{Topic: "t", Wait: 5 * time.Second, LocalOnly: true})
	scan := appendConsumeRequest(nil, ports.RemoteConsume{Topic: "t"})
	for _, c := range []struct {
		name string
		op   Op
		req  []byte
		want slotClass
	}{
		{"commit batch", OpCommitProduceBatch, nil, slotCommit},
		{"commit batches", OpCommitProduceBatches, nil, slotCommit},
		{"commit", OpCommitProduce, nil, slotCommit},
		{"ack", OpAck, nil, slotMessaging},
		{"ack batch", OpAckBatch, nil, slotMessaging},
		{"nack", OpNack, nil, slotMessaging},
		{"token notify", OpTokenNotify, nil, slotMessaging},
		{"consume probe", OpConsume, probe, slotMessaging},
		{"consume without wait", OpConsume, scan, slotMessaging},
		{"unreadable consume", OpConsume, []byte{1}, slotMessaging},
		{"long-poll consume", OpConsume, poll, slotExempt},
		{"join", OpJoinCluster, nil, slotExempt},
		{"create topic", OpCreateTopic, nil, slotExempt},
		{"segment listing", OpListPartitionSegs, nil, slotTransfer},
		{"segment chunk", OpFetchSegmentChunk, nil, slotTransfer},
	} {
		if got := slotClassOf(c.op, c.req); got != c.want {
			t.Errorf("%s: class %d, want %d", c.name, got, c.want)
		}
	}
}

// ensure that consumers parked in long polls hold no handler slot: with
// more of them parked than there are slots, a commit to the node still
// runs at once.
func TestLongPollsDoNotStarveCommits(t *testing.T) {
	t.Parallel()
	const slots, parked = 2, 5
	var waiting atomic.Int32
	release := make(chan struct{})
	s, _ := newServer(t, ServerOptions{MaxHandlers: slots})
	s.Handle(OpConsume, func(ctx context.Context, _ []byte) ([]byte, error) {
		waiting.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return appendDeliveries(nil, nil), nil
	})
	s.Handle(OpCommitProduceBatch, echo)
	defer close(release)
	c, _ := newClient(t, secretA)
	poll := appendConsumeRequest(nil, ports.RemoteConsume{Topic: "t", Wait: 5 * time.Second})
	for range parked {
		go func() { _, _ = c.Call(t.Context(), s.Addr().String(), OpConsume, poll) }()
	}
	waitFor(t, "every long poll parked in its handler", func() bool { return waiting.Load() == parked })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := c.Call(ctx, s.Addr().String(), OpCommitProduceBatch, []byte("x")); err != nil {
		t.Fatalf("commit with %d long polls parked: %v", parked, err)
	}
}

// ensure that commits and messaging have bounds of their own: with every
// commit slot held, an ack runs, and a further commit waits for a slot.
func TestCommitAndMessagingBoundsApart(t *testing.T) {
	t.Parallel()
	var commits atomic.Int32
	release := make(chan struct{})
	s, _ := newServer(t, ServerOptions{MaxHandlers: 1})
	s.Handle(OpCommitProduceBatch, func(context.Context, []byte) ([]byte, error) {
		commits.Add(1)
		<-release
		return []byte("ok"), nil
	})
	s.Handle(OpAck, echo)
	c, _ := newClient(t, secretA)
	addr := s.Addr().String()
	first, second := make(chan error, 1), make(chan error, 1)
	go func() { _, err := c.Call(context.Background(), addr, OpCommitProduceBatch, []byte("a")); first <- err }()
	waitFor(t, "the only commit slot taken", func() bool { return commits.Load() == 1 })
	go func() { _, err := c.Call(context.Background(), addr, OpCommitProduceBatch, []byte("b")); second <- err }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := c.Call(ctx, addr, OpAck, []byte("h")); err != nil {
		t.Fatalf("ack with the commit slot held: %v", err)
	}
	if n := commits.Load(); n != 1 {
		t.Fatalf("%d commit handlers running with one slot", n)
	}
	close(release)
	for _, ch := range []chan error{first, second} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	if n := commits.Load(); n != 2 {
		t.Fatalf("%d commits ran, want 2", n)
	}
}

// ensure that at most transferSlotsCount transfer ops run at once, however
// many arrive, and that commits still run while they are all busy.
func TestTransferOpsRunEightAtATime(t *testing.T) {
	t.Parallel()
	var running, peak atomic.Int32
	release := make(chan struct{})
	s, _ := newServer(t, ServerOptions{})
	s.Handle(OpFetchSegmentChunk, func(ctx context.Context, _ []byte) ([]byte, error) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		running.Add(-1)
		return okReply(appendBytes(nil, nil)), nil
	})
	s.Handle(OpCommitProduceBatch, echo)
	c, _ := newClient(t, secretA)
	for range transferSlotsCount + 4 {
		go func() { _, _ = c.Call(t.Context(), s.Addr().String(), OpFetchSegmentChunk, nil) }()
	}
	waitFor(t, "every transfer slot busy", func() bool { return running.Load() == transferSlotsCount })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Call(ctx, s.Addr().String(), OpCommitProduceBatch, []byte("x")); err != nil {
		t.Fatalf("a commit while every transfer slot is busy: %v", err)
	}
	close(release)
	waitFor(t, "every transfer done", func() bool { return running.Load() == 0 && peak.Load() == transferSlotsCount })
}
