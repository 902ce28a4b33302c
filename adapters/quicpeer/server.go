package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"go.uber.org/zap"
)

// Handler serves one operation. req is the request payload after the op
// byte and is owned by the handler; ctx ends when the caller gives up
// (deadline, cancellation, stream reset) or the server closes. A returned
// error is sent to the caller as an error frame carrying err.Error().
type Handler func(ctx context.Context, req []byte) ([]byte, error)

// ServerOptions configure a Server.
type ServerOptions struct {
	// Secret is the cluster secret; required.
	Secret []byte
	// Log receives refusals (component=audit for failed proofs); required.
	Log *zap.Logger
	// MaxHandlers bounds the commit handlers running at once, and
	// separately the messaging handlers (slots.go); 0 means
	// max(64, 4 × GOMAXPROCS).
	MaxHandlers int
	// Now dates the self-signed certificate; nil means time.Now. Tests use
	// it to serve an expired certificate (F37).
	Now func() time.Time
}

// Server answers node RPC on one UDP address. Register handlers with Handle
// (before or after Listen), then Listen; Close stops it and waits for every
// goroutine it started. Safe for concurrent use.
type Server struct {
	secret []byte
	log    *zap.Logger
	now    func() time.Time
	slots  handlerSlots

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	handlers map[Op]Handler
	conns    map[*quic.Conn]struct{}
	udp      *net.UDPConn
	tr       *quic.Transport
	ln       *quic.Listener
	closed   bool

	accepted atomic.Int64 // connections accepted, for tests
	streams  atomic.Int64 // streams accepted, for tests
	unserved atomic.Int64 // requests given up while waiting for a slot, for tests
}

// NewServer checks the options; the server does not listen yet.
func NewServer(o ServerOptions) (*Server, error) {
	if len(o.Secret) == 0 {
		return nil, fmt.Errorf("quicpeer: new server: %w", ErrNoSecret)
	}
	if o.Log == nil {
		return nil, errors.New("quicpeer: new server: nil logger")
	}
	if o.MaxHandlers <= 0 {
		o.MaxHandlers = max(handlerSlotsMin, handlerSlotsPerProc*runtime.GOMAXPROCS(0))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		secret:   append([]byte(nil), o.Secret...),
		log:      o.Log.Named("quicpeer"),
		now:      o.Now,
		slots:    newHandlerSlots(o.MaxHandlers),
		ctx:      ctx,
		cancel:   cancel,
		handlers: make(map[Op]Handler),
		conns:    make(map[*quic.Conn]struct{}),
	}, nil
}

// Handle registers h for op, replacing any earlier handler. It panics on a
// nil handler (wiring error).
func (s *Server) Handle(op Op, h Handler) {
	if h == nil {
		panic(fmt.Sprintf("quicpeer: nil handler for op %d", op))
	}
	s.mu.Lock()
	s.handlers[op] = h
	s.mu.Unlock()
}

func (s *Server) handler(op Op) Handler {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.handlers[op]
}

// Listen generates the process's certificate, binds addr (UDP) and starts
// accepting connections. It may be called once.
func (s *Server) Listen(addr string) error {
	cert, err := newCertificate(s.now())
	if err != nil {
		return err
	}
	udpAddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return fmt.Errorf("quicpeer: listen %s: %w", addr, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.tr != nil {
		return fmt.Errorf("quicpeer: listen %s: %w", addr, ErrClosed)
	}
	udp, err := net.ListenUDP("udp", udpAddr)
	if err != nil {
		return fmt.Errorf("quicpeer: listen %s: %w", addr, err)
	}
	tr := &quic.Transport{Conn: udp, StatelessResetKey: statelessResetKey(s.secret)}
	ln, err := tr.Listen(serverTLS(cert), quicConfig())
	if err != nil {
		_ = udp.Close()
		return fmt.Errorf("quicpeer: listen %s: %w", addr, err)
	}
	s.udp, s.tr, s.ln = udp, tr, ln
	s.wg.Add(1)
	go s.acceptLoop(ln)
	return nil
}

// Addr is the bound UDP address, nil before Listen.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Close stops accepting, closes every connection, cancels running
// handlers' contexts and waits for all of the server's goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.cancel()
	conns := make([]*quic.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	ln, tr, udp := s.ln, s.tr, s.udp
	s.mu.Unlock()

	if ln != nil {
		_ = ln.Close()
	}
	for _, c := range conns {
		_ = c.CloseWithError(codeShutdown, "node closing")
	}
	s.wg.Wait()
	if tr == nil {
		return nil
	}
	err := tr.Close()
	return errors.Join(err, udp.Close())
}

func (s *Server) acceptLoop(ln *quic.Listener) {
	defer s.wg.Done()
	for {
		conn, err := ln.Accept(s.ctx)
		if err != nil {
			return
		}
		if !s.track(conn) {
			_ = conn.CloseWithError(codeShutdown, "node closing")
			return
		}
		s.accepted.Add(1)
		s.wg.Add(1)
		go s.serveConn(conn)
	}
}

// track records a live connection; false once the server is closed.
func (s *Server) track(conn *quic.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[conn] = struct{}{}
	return true
}

func (s *Server) untrack(conn *quic.Conn) {
	s.mu.Lock()
	delete(s.conns, conn)
	s.mu.Unlock()
}

// serveConn accepts the connection's streams (the client's pooled
// streams), one goroutine per stream.
func (s *Server) serveConn(conn *quic.Conn) {
	defer s.wg.Done()
	defer s.untrack(conn)
	pr, err := connProofs(conn, s.secret)
	if err != nil {
		s.log.Warn("node rpc connection refused", zap.Stringer("peer", conn.RemoteAddr()), zap.Error(err))
		_ = conn.CloseWithError(codeAuthConn, "no keying material")
		return
	}
	for {
		st, err := conn.AcceptStream(s.ctx)
		if err != nil {
			return
		}
		s.streams.Add(1)
		s.wg.Add(1)
		go s.serveStream(conn, pr, st)
	}
}
