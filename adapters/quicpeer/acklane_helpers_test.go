package quicpeer

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// gatedSettler is an owner's use case whose every call waits for a token
// of gate (or its context's end) before fakeService answers and records it.
type gatedSettler struct {
	*fakeService
	gate    chan struct{}
	entered atomic.Int32
}

func newGatedSettler() *gatedSettler {
	return &gatedSettler{fakeService: &fakeService{}, gate: make(chan struct{}, 1024)}
}

func (g *gatedSettler) pass(ctx context.Context) error {
	g.entered.Add(1)
	select {
	case <-g.gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gatedSettler) Settle(ctx context.Context, topic string, h domain.ReceiptHandle, op consume.Op) error {
	if err := g.pass(ctx); err != nil {
		return err
	}
	return g.fakeService.Settle(ctx, topic, h, op)
}

func (g *gatedSettler) AckBatch(ctx context.Context, topic string, hs []domain.ReceiptHandle, op consume.Op) ([]error, error) {
	if err := g.pass(ctx); err != nil {
		return nil, err
	}
	return g.fakeService.AckBatch(ctx, topic, hs, op)
}

// release lets n waiting (or future) calls through.
func (g *gatedSettler) release(n int) {
	for range n {
		g.gate <- struct{}{}
	}
}

// ackOwner starts a node serving settles with s over real UDP: all four
// ops, or with legacy only ops 3, 18 and 19 (a release before AckBatch).
func ackOwner(t testing.TB, s Settler, legacy bool) string {
	t.Helper()
	srv, _ := newServer(t, ServerOptions{})
	if legacy {
		registerSingleSettles(srv, s)
	} else {
		RegisterSettle(srv, s)
	}
	return srv.Addr().String()
}

// ackCaller returns Peers knowing "owner" at addr, observed by obs.
func ackCaller(t testing.TB, addr string, obs Observer, opts ...PeersOption) *Peers {
	t.Helper()
	c, _ := newClient(t, secretA)
	return NewPeers(c, staticResolver{"owner": addr}, append([]PeersOption{WithObserver(obs)}, opts...)...)
}

// queued is how many records wait in node's lane.
func (r *ackRouter) queued(node string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l := r.lanes[node]; l != nil {
		return len(l.queue)
	}
	return 0
}

// settleAsync runs one SettleRemote of hs in the background and returns
// where its outcome arrives.
func settleAsync(ctx context.Context, p *Peers, hs ...domain.ReceiptHandle) <-chan error {
	done := make(chan error, 1)
	go func() {
		errs, err := p.SettleRemote(ctx, "owner", "t", hs, ports.SettleAck)
		if err == nil {
			err = errors.Join(errs...)
		}
		done <- err
	}()
	return done
}

func handle(n int) domain.ReceiptHandle {
	return domain.ReceiptHandle{Partition: int32(n % 3), Offset: int64(n), Nonce: uint64(n) + 1}
}

func count(calls []rpcCall, want rpcCall) int {
	n := 0
	for _, c := range calls {
		if c == want {
			n++
		}
	}
	return n
}
