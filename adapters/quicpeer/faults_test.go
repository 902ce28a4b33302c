package quicpeer

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
)

// header builds a 20-byte frame header declaring n payload bytes.
func header(typ byte, id uint64, n uint32) []byte {
	h := make([]byte, frameHeaderBytes)
	binary.BigEndian.PutUint32(h, frameMagic)
	h[4], h[5] = frameVersion, typ
	binary.BigEndian.PutUint64(h[8:], id)
	binary.BigEndian.PutUint32(h[16:], n)
	return h
}

// readRefusal reads the error frame a server sends for a broken request.
func readRefusal(t *testing.T, st *quic.Stream) string {
	t.Helper()
	f, err := readFrame(st, framePayloadMaxBytes)
	if err != nil || f.Type != typeError {
		t.Fatalf("want an error frame, got type %d, %v", f.Type, err)
	}
	msg, err := parseErrorPayload(f.Payload)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// ensure that the server refuses a request frame declaring more than 16 MiB
// without reading it, names the problem, and logs it.
func TestServerRefusesOversizedFrame(t *testing.T) {
	var ran atomic.Int32
	s, logs := newServer(t, ServerOptions{})
	s.Handle(OpProduce, func(context.Context, []byte) ([]byte, error) { ran.Add(1); return nil, nil })
	st := rawStream(t, s.Addr().String(), secretA)
	if _, err := st.Write(header(typeRequest, 1, framePayloadMaxBytes+1)); err != nil {
		t.Fatal(err)
	}
	if msg := readRefusal(t, st); !strings.Contains(msg, "frame too large") {
		t.Errorf("refusal %q does not say frame too large", msg)
	}
	waitFor(t, "the refusal log", func() bool { return logged(logs, "request refused") })
	if ran.Load() != 0 {
		t.Error("a handler ran for an oversized frame")
	}
}

// ensure that a request frame cut short by the peer is refused as truncated.
func TestServerRefusesTruncatedFrame(t *testing.T) {
	s, logs := newServer(t, ServerOptions{})
	s.Handle(OpProduce, echo)
	st := rawStream(t, s.Addr().String(), secretA)
	if _, err := st.Write(append(header(typeRequest, 1, 100), byte(OpProduce), 'a', 'b')); err != nil {
		t.Fatal(err)
	}
	_ = st.Close() // FIN after 3 of 100 payload bytes
	if msg := readRefusal(t, st); !strings.Contains(msg, "truncated") {
		t.Errorf("refusal %q does not say truncated", msg)
	}
	waitFor(t, "the refusal log", func() bool { return logged(logs, "request refused") })
}

// ensure that a proof frame above 64 bytes is refused as an authentication failure.
func TestServerRefusesOversizedProof(t *testing.T) {
	s, logs := newServer(t, ServerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := quic.DialAddr(ctx, s.Addr().String(), clientTLS(), quicConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.CloseWithError(0, "") }()
	st, err := conn.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = st.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = st.Write(header(typeAuth, 0, proofPayloadMaxBytes+1))
	_, err = readFrame(st, proofPayloadMaxBytes)
	var streamErr *quic.StreamError
	if !errors.As(err, &streamErr) || streamErr.ErrorCode != codeAuth {
		t.Fatalf("oversized proof: %v, want a reset with the auth code", err)
	}
	waitFor(t, "the audit log", func() bool { return logged(logs, "did not prove the cluster secret") })
}

// ensure that the client refuses a reply declaring more than 16 MiB and a
// reply cut short, with clear errors.
func TestClientRefusesBrokenReplies(t *testing.T) {
	cases := []struct {
		name  string
		reply []byte
		want  error
	}{
		{"oversized", header(typeReply, 1, framePayloadMaxBytes+1), ErrFrameTooLarge},
		{"truncated", append(header(typeReply, 1, 100), 1, 2, 3), ErrBadFrame},
		{"bad_magic", append([]byte("XXXX"), header(typeReply, 1, 0)[4:]...), ErrBadFrame},
		{"wrong_request_id", header(typeReply, 99, 0), ErrBadFrame},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := startRawServer(t, secretA, func(st *quic.Stream, pr proofs) {
				if !serverHandshake(st, pr) {
					return
				}
				if _, err := readFrame(st, framePayloadMaxBytes); err != nil {
					return
				}
				_, _ = st.Write(tc.reply)
				_ = st.Close()
			})
			c, _ := newClient(t, secretA)
			_, err := c.Call(context.Background(), rs.addr, OpProduce, []byte("x"))
			if !errors.Is(err, tc.want) {
				t.Fatalf("Call = %v, want %v", err, tc.want)
			}
		})
	}
}

// ensure that the client refuses to send a request above the frame cap, without dialling.
func TestClientRefusesOversizedRequest(t *testing.T) {
	c, _ := newClient(t, secretA)
	_, err := c.Call(context.Background(), "127.0.0.1:1", OpProduce, make([]byte, framePayloadMaxBytes))
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("Call = %v, want ErrFrameTooLarge", err)
	}
	if c.dials.Load() != 0 {
		t.Error("the client dialled for a request it must refuse")
	}
}

// ensure that a peer that stops answering mid-reply makes the call end at
// its deadline with ErrTimeout and context.DeadlineExceeded.
func TestPeerStopsMidStreamTimesOut(t *testing.T) {
	release := make(chan struct{})
	rs := startRawServer(t, secretA, func(st *quic.Stream, pr proofs) {
		if !serverHandshake(st, pr) {
			return
		}
		_, _ = readFrame(st, framePayloadMaxBytes)
		_, _ = st.Write(header(typeReply, 1, 10)[:7]) // half a header, then silence
		<-release
	})
	c, _ := newClient(t, secretA)
	const deadline = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	_, err := c.Call(ctx, rs.addr, OpProduce, []byte("x"))
	elapsed := time.Since(start)
	close(release)
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Call = %v, want ErrTimeout wrapping DeadlineExceeded", err)
	}
	if elapsed < deadline || elapsed > deadline+time.Second {
		t.Errorf("call ended after %v, want about %v", elapsed, deadline)
	}
}

// ensure that a caller giving up cancels the handler's context (the stream
// is reset), and the connection stays usable.
func TestCallerDeadlineCancelsHandler(t *testing.T) {
	handlerDone := make(chan error, 1)
	s, _ := newServer(t, ServerOptions{})
	s.Handle(OpConsume, func(ctx context.Context, _ []byte) ([]byte, error) {
		<-ctx.Done()
		handlerDone <- ctx.Err()
		return nil, ctx.Err()
	})
	s.Handle(OpProduce, echo)
	c, _ := newClient(t, secretA)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := c.Call(ctx, s.Addr().String(), OpConsume, nil); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Call = %v, want ErrTimeout", err)
	}
	select {
	case <-handlerDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context was not cancelled")
	}
	if _, err := c.Call(context.Background(), s.Addr().String(), OpProduce, nil); err != nil {
		t.Fatalf("call after a timeout: %v", err)
	}
	if c.dials.Load() != 1 {
		t.Errorf("dials = %d, want the connection reused", c.dials.Load())
	}
}

// ensure that at most MaxHandlers handlers run at once and the rest wait.
func TestHandlerConcurrencyBounded(t *testing.T) {
	const slots, calls = 2, 6
	var running, peak atomic.Int32
	release := make(chan struct{})
	s, _ := newServer(t, ServerOptions{MaxHandlers: slots})
	s.Handle(OpAck, func(context.Context, []byte) ([]byte, error) {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-release
		running.Add(-1)
		return []byte("ok"), nil
	})
	c, _ := newClient(t, secretA)
	var wg sync.WaitGroup
	var failures atomic.Int32
	for range calls {
		wg.Go(func() {
			if _, err := c.Call(context.Background(), s.Addr().String(), OpAck, nil); err != nil {
				failures.Add(1)
			}
		})
	}
	waitFor(t, "all slots busy", func() bool { return running.Load() == slots })
	close(release)
	wg.Wait()
	if failures.Load() != 0 || peak.Load() != slots {
		t.Fatalf("failures %d, peak %d handlers; want 0 and %d", failures.Load(), peak.Load(), slots)
	}
}

// ensure that a failed dial makes further calls to that peer fail fast
// during the backoff, with ErrUnreachable.
func TestDialFailureBacksOff(t *testing.T) {
	silent, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = silent.Close() }()
	c, _ := newClient(t, secretA)
	addr := silent.LocalAddr().String()

	start := time.Now()
	_, err = c.Call(context.Background(), addr, OpProduce, nil)
	if !errors.Is(err, ErrUnreachable) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("first call = %v, want ErrUnreachable", err)
	}
	if d := time.Since(start); d < dialTimeout || d > dialTimeout+time.Second {
		t.Errorf("dial failed after %v, want about %v", d, dialTimeout)
	}
	start = time.Now()
	_, err = c.Call(context.Background(), addr, OpProduce, nil)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "backoff") {
		t.Fatalf("second call = %v, want a fast ErrUnreachable in backoff", err)
	}
	if d := time.Since(start); d > dialBackoffMin {
		t.Errorf("call in backoff took %v", d)
	}
}

// ensure that a peer restarted on the same address is reached again: the
// broken connection is dropped and a new one dialled.
func TestReconnectAfterPeerRestart(t *testing.T) {
	s, _ := newServer(t, ServerOptions{})
	s.Handle(OpProduce, echo)
	addr := s.Addr().String()
	c, _ := newClient(t, secretA)
	if _, err := c.Call(context.Background(), addr, OpProduce, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, _ := newServerAt(t, addr)
	s2.Handle(OpProduce, echo)
	waitFor(t, "a call to the restarted peer", func() bool {
		_, err := c.Call(context.Background(), addr, OpProduce, nil)
		return err == nil
	})
	if c.dials.Load() != 2 {
		t.Errorf("dials = %d, want 2", c.dials.Load())
	}
}

// ensure that Close cancels a running handler's context and returns.
func TestServerCloseCancelsHandlers(t *testing.T) {
	entered := make(chan struct{})
	s, _ := newServer(t, ServerOptions{})
	s.Handle(OpConsume, func(ctx context.Context, _ []byte) ([]byte, error) {
		close(entered)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	c, _ := newClient(t, secretA)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), s.Addr().String(), OpConsume, bytes.Repeat([]byte{1}, 10))
		errc <- err
	}()
	<-entered
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err == nil {
		t.Fatal("call succeeded against a closed server")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(context.Background(), s.Addr().String(), OpConsume, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call on a closed client = %v, want ErrClosed", err)
	}
}
