package quicpeer

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/narad/narad/domain"
)

// muxScript serves a raw stream like a pooled one: every request waits on
// its own goroutine until gate closes, then gets its payload back; a
// request "break" resets the stream instead; cancel frames are reported.
func muxScript(gate <-chan struct{}, held *atomic.Int32, cancels chan<- uint64, ids chan<- uint64) func(*quic.Stream, proofs) {
	return func(st *quic.Stream, pr proofs) {
		serveFrames(st, pr, readAnyFrame, false, func(ss *scriptStream, f frame) bool {
			switch {
			case f.Type == typeCancel:
				cancels <- f.RequestID
			case string(f.Payload[1:]) == "break":
				st.CancelWrite(77)
				st.CancelRead(77)
				return false
			default:
				if ids != nil {
					ids <- f.RequestID
				}
				held.Add(1)
				ss.wg.Go(func() {
					<-gate
					ss.write(frame{Type: typeReply, RequestID: f.RequestID, Payload: f.Payload[1:]})
				})
			}
			return true
		})
	}
}

// ensure that a stream the peer breaks fails only the calls waiting on it
// (as possibly run: their requests were written), calls on the lane's
// other streams go on, and the next call in that slot opens a new stream.
func TestBrokenStreamFailsOnlyItsWaiters(t *testing.T) {
	gate := make(chan struct{})
	var held atomic.Int32
	rs := startRawServer(t, secretA, muxScript(gate, &held, make(chan uint64, 8), nil))
	c, _ := newClient(t, secretA)
	errs := make(chan error, laneControlStreams)
	for range laneControlStreams { // one held request on each control stream
		go func() {
			_, err := c.Call(context.Background(), rs.addr, OpGetTopic, []byte("hold"))
			errs <- err
		}()
	}
	waitFor(t, "every stream holding a request", func() bool { return held.Load() == laneControlStreams })
	_, err := c.Call(context.Background(), rs.addr, OpGetTopic, []byte("break")) // the first stream again
	if !errors.Is(err, ErrUnreachable) || !errors.Is(err, domain.ErrNoAnswer) {
		t.Fatalf("call on the broken stream = %v, want ErrUnreachable as no answer", err)
	}
	var broken error
	waitFor(t, "the other waiter of the broken stream", func() bool {
		select {
		case broken = <-errs:
			return true
		default:
			return false
		}
	})
	if !errors.Is(broken, domain.ErrNoAnswer) {
		t.Fatalf("waiter of the broken stream = %v, want no answer", broken)
	}
	close(gate)
	for range laneControlStreams - 1 {
		if err := <-errs; err != nil {
			t.Fatalf("call on another stream: %v", err)
		}
	}
	for range laneControlStreams {
		if _, err := c.Call(context.Background(), rs.addr, OpGetTopic, []byte("after")); err != nil {
			t.Fatalf("call after the break: %v", err)
		}
	}
	if c.dials.Load() != 1 {
		t.Errorf("dials = %d, want the connection kept", c.dials.Load())
	}
}

// ensure that a caller giving up sends a cancel frame carrying its
// request's id on the request's stream.
func TestGiveUpSendsCancelFrame(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	var held atomic.Int32
	cancels, ids := make(chan uint64, 8), make(chan uint64, 8)
	rs := startRawServer(t, secretA, muxScript(gate, &held, cancels, ids))
	c, _ := newClient(t, secretA)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, rs.addr, OpConsume, []byte("x"))
		errc <- err
	}()
	id := within(t, ids)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Call = %v, want context.Canceled", err)
	}
	if got := within(t, cancels); got != id {
		t.Fatalf("cancel frame for request %d, want %d", got, id)
	}
}

// ensure that a call ending on its deadline against a peer that has gone
// silent triggers a liveness ping, and the unanswered ping closes the
// connection, so the next call dials afresh.
func TestUnansweredPingClosesConnection(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	rs := startRawServer(t, secretA, func(st *quic.Stream, pr proofs) {
		if serverHandshake(st, pr) {
			<-release // reads nothing more, answers nothing
		}
	})
	c, _ := newClient(t, secretA)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := c.Call(ctx, rs.addr, OpAck, []byte("x")); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Call = %v, want ErrTimeout", err)
	}
	c.mu.Lock()
	conn := c.peers[rs.addr].pc.conn
	c.mu.Unlock()
	select {
	case <-conn.Context().Done():
	case <-time.After(pongTimeout + 5*time.Second):
		t.Fatal("the connection outlived an unanswered liveness ping")
	}
}

// ensure that a live peer answers the liveness ping of a timed-out call,
// so its connection is kept.
func TestAnsweredPingKeepsConnection(t *testing.T) {
	g := newGatedHandler()
	s, _ := newServer(t, ServerOptions{})
	s.Handle(OpAck, g.handle)
	c, _ := newClient(t, secretA)
	addr := s.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := c.Call(ctx, addr, OpAck, []byte("slow")); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Call = %v, want ErrTimeout", err)
	}
	c.mu.Lock()
	pc := c.peers[addr].pc
	c.mu.Unlock()
	if pc.lastPing.Load() == 0 {
		t.Fatal("no liveness ping was sent")
	}
	waitFor(t, "the ping answered", func() bool { return !pc.pinging.Load() })
	if err := pc.conn.Context().Err(); err != nil {
		t.Fatalf("connection closed after an answered ping: %v", err)
	}
}

// ensure that the server answers a ping with a pong of the same id, and a
// cancel frame cancels only the request it names.
func TestServerPingAndCancelFrames(t *testing.T) {
	g := newGatedHandler()
	s, _ := newServer(t, ServerOptions{})
	s.Handle(OpConsume, g.handle)
	cancelled := g.cancelled
	st := rawStream(t, s.Addr().String(), secretA)
	for id, p := range map[uint64]string{1: "a", 2: "b"} {
		if err := writeFrame(st, frame{Type: typeRequest, RequestID: id, Payload: []byte{byte(OpConsume), p[0]}}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "both requests at their handlers", func() bool { return g.entered.Load() == 2 })
	if err := writeFrame(st, frame{Type: typePing, RequestID: 9}); err != nil {
		t.Fatal(err)
	}
	if f, err := readFrame(st, framePayloadMaxBytes); err != nil || f.Type != typePong || f.RequestID != 9 {
		t.Fatalf("answer to a ping: type %d id %d, %v; want pong 9", f.Type, f.RequestID, err)
	}
	if err := writeFrame(st, frame{Type: typeCancel, RequestID: 1}); err != nil {
		t.Fatal(err)
	}
	if got := within(t, cancelled); got != "a" {
		t.Fatalf("cancelled %q, want a", got)
	}
	if f, err := readFrame(st, framePayloadMaxBytes); err != nil || f.Type != typeError || f.RequestID != 1 {
		t.Fatalf("answer to the cancelled request: type %d id %d, %v", f.Type, f.RequestID, err)
	}
	close(g.gate("b"))
	if f, err := readFrame(st, framePayloadMaxBytes); err != nil || f.Type != typeReply || f.RequestID != 2 || string(f.Payload) != "re:b" {
		t.Fatalf("reply to the other request: type %d id %d %q, %v", f.Type, f.RequestID, f.Payload, err)
	}
}
