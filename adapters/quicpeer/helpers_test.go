package quicpeer

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

var (
	secretA = []byte("cluster-secret-a-0123456789abcdef")
	secretB = []byte("cluster-secret-b-0123456789abcdef")
)

// newServer starts a Server on 127.0.0.1 and returns it with its observed logs.
func newServer(t testing.TB, o ServerOptions) (*Server, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	if o.Secret == nil {
		o.Secret = secretA
	}
	o.Log = zap.New(core)
	s, err := NewServer(o)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	if err := s.Listen("127.0.0.1:0"); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, logs
}

func newClient(t testing.TB, secret []byte) (*Client, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	c, err := NewClient(ClientOptions{Secret: secret, Log: zap.New(core)})
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, logs
}

func echo(_ context.Context, req []byte) ([]byte, error) {
	return append([]byte("echo:"), req...), nil
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond) // polling interval, not synchronization
	}
}

func logged(logs *observer.ObservedLogs, msgPart string) bool {
	for _, e := range logs.All() {
		if strings.Contains(e.Message, msgPart) {
			return true
		}
	}
	return false
}

// rawServer is a misbehaving peer: a QUIC listener speaking the handshake
// with the given secret and then running script on each stream.
type rawServer struct {
	addr string
	stop func()
}

func startRawServer(t *testing.T, secret []byte, script func(st *quic.Stream, pr proofs)) *rawServer {
	t.Helper()
	cert, err := newCertificate(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tr := &quic.Transport{Conn: udp}
	ln, err := tr.Listen(serverTLS(cert), quicConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			conn, err := ln.Accept(ctx)
			if err != nil {
				return
			}
			pr, _ := connProofs(conn, secret)
			wg.Go(func() {
				defer func() { _ = conn.CloseWithError(codeShutdown, "") }()
				for {
					st, err := conn.AcceptStream(ctx)
					if err != nil {
						return
					}
					wg.Go(func() { script(st, pr) })
				}
			})
		}
	})
	rs := &rawServer{addr: ln.Addr().String(), stop: func() {
		cancel()
		_ = ln.Close()
		_ = tr.Close()
		wg.Wait()
		_ = udp.Close()
	}}
	t.Cleanup(rs.stop)
	return rs
}

// rawStream dials addr as a well-behaved client up to the proofs and
// returns the stream, ready for a (possibly broken) request frame.
func rawStream(t *testing.T, addr string, secret []byte) *quic.Stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := quic.DialAddr(ctx, addr, clientTLS(), quicConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.CloseWithError(0, "") })
	pr, err := connProofs(conn, secret)
	if err != nil {
		t.Fatal(err)
	}
	st, err := conn.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = st.SetDeadline(time.Now().Add(5 * time.Second))
	if err := writeFrame(st, frame{Type: typeAuth, Payload: pr.client}); err != nil {
		t.Fatal(err)
	}
	f, err := readFrame(st, proofPayloadMaxBytes)
	if err != nil || !checkProof(f, pr.server) {
		t.Fatalf("server proof: %v", err)
	}
	return st
}

// serverHandshake is the server side of the proofs for raw servers.
func serverHandshake(st *quic.Stream, pr proofs) bool {
	f, err := readFrame(st, proofPayloadMaxBytes)
	if err != nil || !checkProof(f, pr.client) {
		return false
	}
	return writeFrame(st, frame{Type: typeAuth, Payload: pr.server}) == nil
}

// newServerAt starts a Server with secretA on a given address.
func newServerAt(t *testing.T, addr string) (*Server, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	s, err := NewServer(ServerOptions{Secret: secretA, Log: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(addr); err != nil {
		t.Fatalf("Listen %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, logs
}

// scriptStream is a raw server-side stream as a test script drives it:
// frames written one at a time (as serverStream.write does), goroutines
// started with later ended before the script returns.
type scriptStream struct {
	st  *quic.Stream
	wmu sync.Mutex
	wg  sync.WaitGroup
}

// write writes f under the stream's write lock.
func (ss *scriptStream) write(f frame) {
	ss.wmu.Lock()
	defer ss.wmu.Unlock()
	_ = writeFrame(ss.st, f)
}

// replyAfter answers request id with payload after d, off the read loop.
func (ss *scriptStream) replyAfter(d time.Duration, id uint64, payload string) {
	ss.wg.Go(func() {
		time.Sleep(d)
		ss.write(frame{Type: typeReply, RequestID: id, Payload: []byte(payload)})
	})
}

// serveFrames runs a script after the handshake: read returns each frame
// (readAnyFrame for the plain loop), handle acts on it; the loop ends when
// a read fails or handle returns false. A ping is answered with its pong
// unless handle is given it (pongs: false).
func serveFrames(st *quic.Stream, pr proofs, read func(*quic.Stream) (frame, error), pongs bool, handle func(*scriptStream, frame) bool) {
	if !serverHandshake(st, pr) {
		return
	}
	ss := &scriptStream{st: st}
	defer ss.wg.Wait()
	for {
		f, err := read(st)
		if err != nil {
			return
		}
		if pongs && f.Type == typePing {
			ss.wg.Go(func() { ss.write(frame{Type: typePong, RequestID: f.RequestID}) })
			continue
		}
		if !handle(ss, f) {
			return
		}
	}
}

// readAnyFrame reads one frame of any size up to the cap.
func readAnyFrame(st *quic.Stream) (frame, error) { return readFrame(st, framePayloadMaxBytes) }
