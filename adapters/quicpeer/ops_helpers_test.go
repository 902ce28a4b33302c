package quicpeer

import (
	"context"
	"sync"
	"testing"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// staticResolver maps node ids to addresses.
type staticResolver map[string]string

func (r staticResolver) Addr(node string) (string, bool) {
	a, ok := r[node]
	return a, ok
}

// fakeCommitter answers every commit with first (or err) and records it.
type fakeCommitter struct {
	mu    sync.Mutex
	got   []ports.CommitRequest
	first int64
	err   error
	block bool // wait for the handler's context to end, then report it
	ended chan error
}

func (f *fakeCommitter) CommitBatch(ctx context.Context, req ports.CommitRequest) (int64, error) {
	if f.block {
		<-ctx.Done()
		f.ended <- ctx.Err()
		return 0, ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, req)
	return f.first, f.err
}

func (f *fakeCommitter) commits() []ports.CommitRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ports.CommitRequest(nil), f.got...)
}

func (f *fakeService) calls() ([]consume.Request, []settleCall, []settleBatch) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]consume.Request(nil), f.consumes...), append([]settleCall(nil), f.settles...), append([]settleBatch(nil), f.batches...)
}

// fakeService is a consume use case answering from canned values.
type fakeService struct {
	mu       sync.Mutex
	consumes []consume.Request
	settles  []settleCall
	batches  []settleBatch

	deliveries []domain.Delivery
	consumeErr error
	settleErr  map[domain.ReceiptHandle]error // per handle
	topicErr   error                          // whole-request error
}

type settleCall struct {
	topic string
	h     domain.ReceiptHandle
	op    consume.Op
}

type settleBatch struct {
	topic string
	hs    []domain.ReceiptHandle
	op    consume.Op
	nack  consume.NackOptions // a nack's through NackBatchWith
}

func (f *fakeService) Consume(_ context.Context, req consume.Request) ([]domain.Delivery, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.consumes = append(f.consumes, req)
	return f.deliveries, f.consumeErr
}

func (f *fakeService) Settle(_ context.Context, topic string, h domain.ReceiptHandle, op consume.Op) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settles = append(f.settles, settleCall{topic, h, op})
	if f.topicErr != nil {
		return f.topicErr
	}
	return f.settleErr[h]
}

func (f *fakeService) AckBatch(_ context.Context, topic string, hs []domain.ReceiptHandle, op consume.Op) ([]error, error) {
	return f.batch(settleBatch{topic: topic, hs: append([]domain.ReceiptHandle(nil), hs...), op: op})
}

func (f *fakeService) NackBatchWith(_ context.Context, topic string, hs []domain.ReceiptHandle, opts consume.NackOptions) ([]error, error) {
	return f.batch(settleBatch{topic: topic, hs: append([]domain.ReceiptHandle(nil), hs...), op: consume.OpNack, nack: opts})
}

func (f *fakeService) batch(b settleBatch) ([]error, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.batches = append(f.batches, b)
	hs := b.hs
	if f.topicErr != nil {
		return nil, f.topicErr
	}
	out := make([]error, len(hs))
	for i, h := range hs {
		out[i] = f.settleErr[h]
	}
	return out, nil
}

// owner is a node serving the operations over real UDP on 127.0.0.1.
type owner struct {
	srv       *Server
	committer *fakeCommitter
	service   *fakeService
}

func startOwner(t *testing.T) *owner {
	t.Helper()
	srv, _ := newServer(t, ServerOptions{})
	o := &owner{srv: srv, committer: &fakeCommitter{ended: make(chan error, 1)}, service: &fakeService{}}
	RegisterCommit(srv, o.committer)
	RegisterConsume(srv, o.service)
	RegisterSettle(srv, o.service)
	return o
}

// callerFor returns a second node's Peers that knows "owner" at o's address.
func callerFor(t *testing.T, o *owner) *Peers {
	t.Helper()
	c, _ := newClient(t, secretA)
	return NewPeers(c, staticResolver{"owner": o.srv.Addr().String()})
}

// dispatcherKeeps mirrors application/produce's settle: every commit
// failure but domain.ErrTopicNotFound keeps the records for a retry (the
// incarnation refusal returns them to the WAL for the rescan).
func dispatcherKeeps(err error) bool {
	return err != nil && !errorsIs(err, domain.ErrTopicNotFound)
}

// setSettleErr arms per-handle refusals; the owner's handlers read them
// under f.mu (the race detector sees no order through the UDP socket).
func (f *fakeService) setSettleErr(m map[domain.ReceiptHandle]error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settleErr = m
}
