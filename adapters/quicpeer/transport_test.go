package quicpeer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/narad/narad/domain"
)

// ensure that a request reaches its op's handler and the reply comes back intact.
func TestCallRoundTrip(t *testing.T) {
	s, _ := newServer(t, ServerOptions{})
	s.Handle(OpProduce, echo)
	s.Handle(OpAck, func(context.Context, []byte) ([]byte, error) { return nil, nil })
	c, _ := newClient(t, secretA)
	addr := s.Addr().String()

	got, err := c.Call(context.Background(), addr, OpProduce, []byte("hello"))
	if err != nil || string(got) != "echo:hello" {
		t.Fatalf("Call = %q, %v; want echo:hello", got, err)
	}
	got, err = c.Call(context.Background(), addr, OpAck, nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("empty Call = %q, %v", got, err)
	}
	big := bytes.Repeat([]byte{0xA5}, 3<<20)
	got, err = c.Call(context.Background(), addr, OpProduce, big)
	if err != nil || !bytes.Equal(got[5:], big) {
		t.Fatalf("3 MiB Call: %d bytes, %v", len(got), err)
	}
}

// ensure that many concurrent calls to one peer share one QUIC connection, one dial.
func TestConcurrentCallsShareOneConnection(t *testing.T) {
	s, _ := newServer(t, ServerOptions{})
	s.Handle(OpConsume, echo)
	c, _ := newClient(t, secretA)
	addr := s.Addr().String()

	const calls = 200
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for i := range calls {
		wg.Go(func() {
			req := fmt.Appendf(nil, "m%d", i)
			got, err := c.Call(context.Background(), addr, OpConsume, req)
			if err == nil && string(got) != "echo:"+string(req) {
				err = fmt.Errorf("reply %q to %q", got, req)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := s.accepted.Load(); n != 1 {
		t.Errorf("server accepted %d connections, want 1", n)
	}
	if n := c.dials.Load(); n != 1 {
		t.Errorf("client dialled %d times, want 1", n)
	}
}

// ensure that an unknown op and a handler's error come back as remote errors.
func TestRemoteErrors(t *testing.T) {
	s, _ := newServer(t, ServerOptions{})
	s.Handle(OpNack, func(context.Context, []byte) ([]byte, error) { return nil, errors.New("no such lease") })
	s.Handle(OpExtendAck, func(context.Context, []byte) ([]byte, error) { panic("boom") })
	c, _ := newClient(t, secretA)
	addr := s.Addr().String()

	_, err := c.Call(context.Background(), addr, OpRemoteCheck, nil)
	if !errors.Is(err, ErrUnsupportedOp) || !errors.Is(err, ErrRemote) {
		t.Errorf("unknown op: %v, want ErrUnsupportedOp", err)
	}
	_, err = c.Call(context.Background(), addr, OpNack, nil)
	var re *RemoteError
	if !errors.As(err, &re) || re.Message != "no such lease" || re.Op != OpNack || errors.Is(err, ErrUnsupportedOp) {
		t.Errorf("handler error: %v", err)
	}
	_, err = c.Call(context.Background(), addr, OpExtendAck, nil)
	if !errors.As(err, &re) || re.Message != "internal error" {
		t.Errorf("panicking handler: %v", err)
	}
}

// ensure that a client with another secret is refused with ErrAuth, the
// server logs the refusal, and no handler runs.
func TestWrongSecretRefused(t *testing.T) {
	var ran atomic.Int32
	s, serverLogs := newServer(t, ServerOptions{Secret: secretA})
	s.Handle(OpCreateUser, func(context.Context, []byte) ([]byte, error) { ran.Add(1); return nil, nil })
	c, clientLogs := newClient(t, secretB)

	_, err := c.Call(context.Background(), s.Addr().String(), OpCreateUser, []byte("u"))
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "refused our cluster proof") {
		t.Fatalf("wrong secret: %v, want ErrAuth naming the refusal", err)
	}
	waitFor(t, "the server's audit log", func() bool { return logged(serverLogs, "did not prove the cluster secret") })
	for _, e := range serverLogs.All() {
		if strings.Contains(e.Message, "did not prove") && e.ContextMap()["component"] != "audit" {
			t.Errorf("refusal logged without component=audit: %v", e.ContextMap())
		}
	}
	if !logged(clientLogs, "refused our cluster proof") {
		t.Error("client did not log the refusal")
	}
	// The refused stream is not reused: the next call proves again on a new
	// stream of its lane and is refused again.
	if _, err := c.Call(context.Background(), s.Addr().String(), OpCreateUser, []byte("u")); !errors.Is(err, ErrAuth) || !errors.Is(err, domain.ErrNotSent) {
		t.Fatalf("second call with the wrong secret: %v, want ErrAuth as not sent", err)
	}
	if ran.Load() != 0 {
		t.Error("a handler ran for an unauthenticated stream")
	}
}

// ensure that a server that cannot prove the secret gets no request at all
// (the client sends nothing after its proof on a fresh connection).
func TestServerWithoutSecretGetsNoRequest(t *testing.T) {
	var sawRequest atomic.Bool
	rs := startRawServer(t, secretA, func(st *quic.Stream, pr proofs) {
		if _, err := readFrame(st, proofPayloadMaxBytes); err != nil {
			return
		}
		_ = writeFrame(st, frame{Type: typeAuth, Payload: bytes.Repeat([]byte{7}, proofBytes)})
		_ = st.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := readFrame(st, framePayloadMaxBytes); err == nil {
			sawRequest.Store(true)
		}
	})
	c, _ := newClient(t, secretA)
	_, err := c.Call(context.Background(), rs.addr, OpCreateUser, []byte("secret-payload"))
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "could not prove") {
		t.Fatalf("impostor server: %v, want ErrAuth", err)
	}
	rs.stop()
	if sawRequest.Load() {
		t.Error("the client sent its request to a server that did not prove the secret")
	}
}

// ensure that a peer whose certificate expired long ago is still accepted:
// certificates carry no trust, dates are not checked (internals F37).
func TestExpiredCertificateAccepted(t *testing.T) {
	twoYearsAgo := func() time.Time { return time.Now().Add(-2 * 365 * 24 * time.Hour) }
	s, _ := newServer(t, ServerOptions{Now: twoYearsAgo})
	s.Handle(OpProduce, echo)
	c, _ := newClient(t, secretA)
	addr := s.Addr().String()

	if _, err := c.Call(context.Background(), addr, OpProduce, []byte("x")); err != nil {
		t.Fatalf("call to a peer with an expired certificate: %v", err)
	}
	c.mu.Lock()
	cert := c.peers[addr].pc.conn.ConnectionState().TLS.PeerCertificates[0]
	c.mu.Unlock()
	if !cert.NotAfter.Before(time.Now()) {
		t.Fatalf("certificate not expired: NotAfter %v", cert.NotAfter)
	}
	if cert.NotAfter.Sub(cert.NotBefore) < certLifetime {
		t.Errorf("certificate lifetime %v, want one year", cert.NotAfter.Sub(cert.NotBefore))
	}
}
