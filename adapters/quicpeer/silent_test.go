package quicpeer

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/narad/narad/domain"
)

// udpRelay stands between one client and a server: it forwards every
// datagram both ways until cut, then drops every one both ways (the server
// cut off the network, as by docker network disconnect) until heal.
type udpRelay struct {
	front  *net.UDPConn // the address clients dial
	back   *net.UDPConn // connected to the server
	client atomic.Pointer[net.UDPAddr]
	cut    atomic.Bool
	wg     sync.WaitGroup
}

func startRelay(t *testing.T, server string) *udpRelay {
	t.Helper()
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	to, err := net.ResolveUDPAddr("udp", server)
	if err != nil {
		t.Fatal(err)
	}
	back, err := net.DialUDP("udp", nil, to)
	if err != nil {
		t.Fatal(err)
	}
	r := &udpRelay{front: front, back: back}
	r.wg.Go(func() {
		buf := make([]byte, 64<<10)
		for {
			n, from, err := front.ReadFromUDP(buf)
			if err != nil {
				return
			}
			r.client.Store(from)
			if !r.cut.Load() {
				_, _ = back.Write(buf[:n])
			}
		}
	})
	r.wg.Go(func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := back.Read(buf)
			if err != nil {
				return
			}
			if to := r.client.Load(); to != nil && !r.cut.Load() {
				_, _ = front.WriteToUDP(buf[:n], to)
			}
		}
	})
	t.Cleanup(func() {
		_ = front.Close()
		_ = back.Close()
		r.wg.Wait()
	})
	return r
}

func (r *udpRelay) addr() string { return r.front.LocalAddr().String() }

// silenceBound is when a call on a silent connection must have failed,
// counted from the cut: the watchdog's bound and check interval, and
// room for a loaded test machine (-race).
const silenceBound = silentPeerAfterDuration + silentCheckIntervalDuration + time.Second

// callResult is one call's outcome and when it came.
type callResult struct {
	err error
	at  time.Time
}

// callAsync runs one call with a deadline far beyond the watchdog's bound,
// so that only the watchdog can end it early.
func callAsync(c *Client, addr string, op Op, req string) <-chan callResult {
	out := make(chan callResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := c.Call(ctx, addr, op, []byte(req))
		out <- callResult{err, time.Now()}
	}()
	return out
}

// ensure that calls on a connection whose peer goes silent (every datagram
// dropped: a peer cut off the network, not dead) fail within the watchdog's
// bound of the cut, long before their one-minute deadline, as unreachable,
// not timed out: a call whose handler was running and a call written on an
// open stream after the cut as no answer (outcome unknown), a call still
// waiting for its stream's proofs as not sent; and that once the network
// heals the next call dials afresh and is answered (internals.md §10.1).
func TestSilentPeerFailsCallsWithinBound(t *testing.T) {
	g := newGatedHandler()
	s, _ := newServer(t, ServerOptions{})
	s.Handle(OpGetTopic, g.handle)
	s.Handle(OpGetAssignment, echo)
	s.Handle(OpAck, echo)
	relay := startRelay(t, s.Addr().String())
	c, logs := newClient(t, secretA)
	t.Cleanup(func() { close(g.gate("held")); close(g.gate("after cut")) })
	for range laneControlStreams { // every control stream open and proven
		if _, err := c.Call(context.Background(), relay.addr(), OpGetAssignment, []byte("warm")); err != nil {
			t.Fatal(err)
		}
	}
	held := callAsync(c, relay.addr(), OpGetTopic, "held")
	waitFor(t, "the handler running", func() bool { return g.entered.Load() == 1 })

	relay.cut.Store(true)
	cutAt := time.Now()
	late := callAsync(c, relay.addr(), OpGetTopic, "after cut")  // an open stream
	unsent := callAsync(c, relay.addr(), OpAck, "no stream yet") // the ack lane's first stream
	for _, w := range []struct {
		name  string
		ch    <-chan callResult
		class error
	}{
		{"held call", held, domain.ErrNoAnswer},
		{"call after the cut", late, domain.ErrNoAnswer},
		{"call without a stream", unsent, domain.ErrNotSent},
	} {
		name, ch := w.name, w.ch
		var r callResult
		select {
		case r = <-ch:
		case <-time.After(silenceBound + time.Second):
			t.Fatalf("%s still waiting %s after the cut", name, time.Since(cutAt).Round(time.Millisecond))
		}
		took := r.at.Sub(cutAt)
		t.Logf("%s failed %s after the cut: %v", name, took.Round(time.Millisecond), r.err)
		if took > silenceBound {
			t.Errorf("%s failed %s after the cut, want within %s", name, took, silenceBound)
		}
		if !errors.Is(r.err, w.class) || !errors.Is(r.err, ErrUnreachable) ||
			errors.Is(r.err, ErrTimeout) || errors.Is(r.err, context.DeadlineExceeded) {
			t.Errorf("%s = %v, want unreachable (%v), not a timeout", name, r.err, w.class)
		}
	}
	if !logged(logs, "peer silent") {
		t.Error("the watchdog did not log the silent peer")
	}

	relay.cut.Store(false)
	if _, err := c.Call(context.Background(), relay.addr(), OpAck, []byte("healed")); err != nil {
		t.Fatalf("call after the heal: %v", err)
	}
	if n := c.dials.Load(); n != 2 {
		t.Fatalf("dials = %d, want a fresh connection after the silent one", n)
	}
}

// ensure that a slow but live peer is never taken for silent: a handler
// that answers only after twice the watchdog's bound (its node answers the
// pings meanwhile) is answered on the same connection.
func TestSlowPeerAnsweringPingsIsNotSilent(t *testing.T) {
	s, _ := newServer(t, ServerOptions{})
	s.Handle(OpGetTopic, func(ctx context.Context, req []byte) ([]byte, error) {
		select {
		case <-time.After(2 * silentPeerAfterDuration): // a slow handler, not a synchronization
			return req, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	relay := startRelay(t, s.Addr().String())
	c, logs := newClient(t, secretA)
	r := <-callAsync(c, relay.addr(), OpGetTopic, "slow")
	if r.err != nil {
		t.Fatalf("slow call: %v", r.err)
	}
	c.mu.Lock()
	pc := c.peers[relay.addr()].pc
	c.mu.Unlock()
	if pc.keepalives.Load() == 0 {
		t.Error("the watchdog never pinged the quiet connection")
	}
	if c.dials.Load() != 1 || pc.conn.Context().Err() != nil || logged(logs, "peer silent") {
		t.Fatalf("a live peer's connection was closed (dials %d): %v", c.dials.Load(), pc.conn.Context().Err())
	}
}

// trickleScript answers every request with a reply of 16 chunks of 64 KiB
// written 400 ms apart (a slow link: about 6 s in all), and no pongs, so
// only the reply's bytes show that the peer is alive.
func trickleScript(st *quic.Stream, pr proofs) {
	serveFrames(st, pr, readAnyFrame, false, func(ss *scriptStream, f frame) bool {
		if f.Type != typeRequest {
			return true
		}
		ss.wg.Go(func() {
			ss.wmu.Lock()
			defer ss.wmu.Unlock()
			const chunks, size = 16, 64 << 10
			_ = ss.st.SetWriteDeadline(time.Time{}) // the proof's write set one
			if _, err := ss.st.Write(appendHeader(nil, typeReply, f.RequestID, chunks*size)); err != nil {
				return
			}
			chunk := make([]byte, size)
			for range chunks {
				time.Sleep(400 * time.Millisecond) // the slow link, not a synchronization
				if _, err := ss.st.Write(chunk); err != nil {
					return
				}
			}
		})
		return true
	})
}

// ensure that a peer that keeps sending bytes (a large reply trickling in
// for twice the watchdog's bound) is never taken for silent.
func TestTricklingPeerIsNotSilent(t *testing.T) {
	rs := startRawServer(t, secretA, trickleScript)
	c, logs := newClient(t, secretA)
	r := <-callAsync(c, rs.addr, OpGetTopic, "big")
	if r.err != nil {
		t.Fatalf("trickled call: %v", r.err)
	}
	if c.dials.Load() != 1 || logged(logs, "peer silent") {
		t.Fatalf("a live peer's connection was closed (dials %d)", c.dials.Load())
	}
}
