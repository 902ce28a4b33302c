package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/domain"
)

// gatedHandler holds every request until the test releases it by payload;
// a request whose context ends first reports its payload on cancelled.
type gatedHandler struct {
	mu        sync.Mutex
	gates     map[string]chan struct{}
	entered   atomic.Int32
	cancelled chan string
}

func newGatedHandler() *gatedHandler {
	return &gatedHandler{gates: map[string]chan struct{}{}, cancelled: make(chan string, 64)}
}

func (g *gatedHandler) gate(key string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gates[key] == nil {
		g.gates[key] = make(chan struct{})
	}
	return g.gates[key]
}

func (g *gatedHandler) handle(ctx context.Context, req []byte) ([]byte, error) {
	gate := g.gate(string(req))
	g.entered.Add(1)
	select {
	case <-gate:
		return append([]byte("re:"), req...), nil
	case <-ctx.Done():
		g.cancelled <- string(req)
		return nil, ctx.Err()
	}
}

// ensure that the ops ride the lanes of internals.md §10.1.
func TestLaneOfOps(t *testing.T) {
	want := map[Op]lane{
		OpProduce: laneProduce, OpCommitProduce: laneProduce,
		OpCommitProduceBatch: laneProduce, OpCommitProduceBatches: laneProduce,
		OpConsume: laneConsume, OpTokenRegister: laneConsume, OpTokenNotify: laneConsume,
		OpAck: laneAck, OpExtendAck: laneAck, OpNack: laneAck, OpAckBatch: laneAck,
		OpCreateTopic: laneControl, OpJoinCluster: laneControl, OpTopicPartitionStats: laneControl,
	}
	for op, l := range want {
		if got := laneOf(op); got != l {
			t.Errorf("laneOf(%d) = %d, want %d", op, got, l)
		}
	}
}

// ensure that streams open lazily, one per slot until the lane is full,
// and that many requests in flight on a lane's shared streams each get
// their own reply although the replies come back in reverse order.
func TestLaneSharesStreamsAndMatchesRepliesByID(t *testing.T) {
	g := newGatedHandler()
	s, _ := newServer(t, ServerOptions{MaxHandlers: 128})
	s.Handle(OpAck, g.handle)
	c, _ := newClient(t, secretA)
	addr := s.Addr().String()
	close(g.gate("warm"))
	if _, err := c.Call(context.Background(), addr, OpAck, []byte("warm")); err != nil {
		t.Fatal(err)
	}
	if n := s.streams.Load(); n != 1 {
		t.Fatalf("one call opened %d streams, want 1", n)
	}

	const calls = 3 * laneAckStreams
	replies := make([]chan error, calls)
	for i := range calls {
		replies[i] = make(chan error, 1)
		go func() {
			req := fmt.Appendf(nil, "m%d", i)
			got, err := c.Call(context.Background(), addr, OpAck, req)
			if err == nil && string(got) != "re:"+string(req) {
				err = fmt.Errorf("reply %q to %q", got, req)
			}
			replies[i] <- err
		}()
	}
	waitFor(t, "every request at its handler", func() bool { return g.entered.Load() == calls+1 })
	for i := calls - 1; i >= 0; i-- {
		close(g.gate(fmt.Sprintf("m%d", i)))
		if err := <-replies[i]; err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if n := s.streams.Load(); n != laneAckStreams {
		t.Errorf("%d calls in flight opened %d streams, want the lane's %d", calls, n, laneAckStreams)
	}
	if n := s.accepted.Load(); n != 1 {
		t.Errorf("server accepted %d connections, want 1", n)
	}
}

// ensure that a caller giving up cancels only its own handler: another
// request on the same stream goes on and is answered, and the stream is
// not reset (no new stream opens).
func TestCancelledCallCancelsOnlyItsHandler(t *testing.T) {
	g := newGatedHandler()
	s, _ := newServer(t, ServerOptions{})
	s.Handle(OpGetTopic, g.handle)
	cancelled := g.cancelled
	c, _ := newClient(t, secretA)
	addr := s.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make(chan error, laneControlStreams)
	for i := range laneControlStreams { // one request on each control stream
		callCtx := context.Background()
		if i == 0 {
			callCtx = ctx
		}
		go func() {
			_, err := c.Call(callCtx, addr, OpGetTopic, fmt.Appendf(nil, "r%d", i))
			errs <- err
		}()
		waitFor(t, "the request at its handler", func() bool { return g.entered.Load() == int32(i+1) })
	}
	shared := make(chan error, 1) // the next call rides the first stream again
	go func() {
		_, err := c.Call(context.Background(), addr, OpGetTopic, []byte("shared"))
		shared <- err
	}()
	waitFor(t, "the shared request at its handler", func() bool { return g.entered.Load() == laneControlStreams+1 })

	cancel()
	if got := within(t, cancelled); got != "r0" {
		t.Fatalf("handler %q cancelled, want r0", got)
	}
	if err := <-errs; !errors.Is(err, context.Canceled) || !errors.Is(err, domain.ErrNoAnswer) {
		t.Fatalf("cancelled call = %v, want context.Canceled as no answer", err)
	}
	close(g.gate("shared"))
	if err := <-shared; err != nil {
		t.Fatalf("the other request on the stream: %v", err)
	}
	for i := 1; i < laneControlStreams; i++ {
		close(g.gate(fmt.Sprintf("r%d", i)))
	}
	for i := 1; i < laneControlStreams; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	select {
	case got := <-cancelled:
		t.Fatalf("handler %q cancelled too", got)
	default:
	}
	if n := s.streams.Load(); n != laneControlStreams {
		t.Errorf("%d streams opened, want %d (none reset)", n, laneControlStreams)
	}
}

// within receives from ch, failing the test after 5 s.
func within[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("nothing arrived within 5 s")
	}
	panic("unreachable")
}
