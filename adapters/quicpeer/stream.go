package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"go.uber.org/zap"
)

// pooledStream is one stream of a lane (internals.md §10.1): its proofs are
// exchanged once, then requests of many callers share it, matched to their
// replies by request id. One reader goroutine owns its receive side.
type pooledStream struct {
	pc  *peerConn
	log *zap.Logger
	st  *quic.Stream // set before ready is closed

	ready   chan struct{} // closed when the proofs were exchanged or failed
	openErr error         // why the stream never became usable; set before ready
	pong    chan struct{} // a pong arrived (buffered 1)

	wlock   chan struct{} // the write lock (a channel, so a waiter can give up)
	dlMu    sync.Mutex    // guards writing and the write deadline
	writing uint64        // id of the request being written, 0 when none

	mu      sync.Mutex
	waiters map[uint64]chan result // callers waiting, by request id
	// highest is the highest request id registered on this stream: a frame
	// for an id at or below it answers a call that gave up (or a cancel
	// frame, from an older server); one above it was never asked for.
	highest uint64
	broken  error // set once: the stream is unusable
}

// result is what a waiter receives: the reply payload or an error.
type result struct {
	resp []byte
	err  error
}

// openStream starts a stream of pc: its reader opens it, exchanges the
// proofs, then reads replies until it breaks.
func (c *Client) openStream(pc *peerConn, peerAddr string) *pooledStream {
	ps := &pooledStream{
		pc: pc, log: c.log.With(zap.String("peer", peerAddr)),
		ready: make(chan struct{}), pong: make(chan struct{}, 1), wlock: make(chan struct{}, 1),
		waiters: map[uint64]chan result{},
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		ps.openErr, ps.broken = ErrClosed, ErrClosed
		close(ps.ready)
		return ps
	}
	c.wg.Add(1)
	go c.runStream(ps, peerAddr)
	return ps
}

// runStream opens the stream, proves the secret and checks the server's
// proof under the client's context, then reads frames until the stream
// breaks. A server that cannot prove the secret gets nothing but our proof.
func (c *Client) runStream(ps *pooledStream, peerAddr string) {
	defer c.wg.Done()
	err := c.handshake(ps, peerAddr)
	if err != nil {
		ps.openErr = err
		ps.fail(err)
		close(ps.ready)
		if ps.st != nil {
			ps.st.CancelWrite(codeAuth)
			ps.st.CancelRead(codeAuth)
		}
		return
	}
	close(ps.ready)
	ps.fail(ps.readLoop())
	ps.st.CancelRead(codeCancel)
	ps.st.CancelWrite(codeCancel)
}

// handshake opens ps's stream and exchanges the proofs (internals.md §10.2).
func (c *Client) handshake(ps *pooledStream, peerAddr string) error {
	ctx, cancel := context.WithTimeout(c.ctx, proofReadTimeout)
	defer cancel()
	st, err := ps.pc.conn.OpenStreamSync(ctx)
	if err != nil {
		return fmt.Errorf("open stream: %w", err)
	}
	ps.st = st
	_ = st.SetDeadline(time.Now().Add(proofReadTimeout))
	defer func() { _ = st.SetDeadline(time.Time{}) }()
	if err := writeFrame(st, frame{Type: typeAuth, Payload: ps.pc.proofs.client}); err != nil {
		return fmt.Errorf("write proof: %w", err)
	}
	f, err := readFrame(st, proofPayloadMaxBytes)
	if err != nil {
		var streamErr *quic.StreamError
		if errors.As(err, &streamErr) && streamErr.Remote && streamErr.ErrorCode == codeAuth {
			c.log.Warn("node rpc peer refused our cluster proof", zap.String("component", "audit"), zap.String("peer", peerAddr))
		}
		return fmt.Errorf("read server proof: %w", err)
	}
	if !checkProof(f, ps.pc.proofs.server) {
		c.log.Warn("node rpc peer could not prove the cluster secret", zap.String("component", "audit"), zap.String("peer", peerAddr))
		return fmt.Errorf("peer could not prove the cluster secret: %w", ErrAuth)
	}
	return nil
}

// readLoop dispatches replies to their waiters until the stream breaks,
// and returns why it broke.
func (ps *pooledStream) readLoop() error {
	r := countingReader{r: ps.st, n: &ps.pc.received}
	for {
		f, err := readFrame(r, framePayloadMaxBytes)
		if err != nil {
			return fmt.Errorf("read reply: %w", err)
		}
		switch f.Type {
		case typeReply, typeError:
			if err := ps.deliver(f); err != nil {
				return err
			}
		case typePong:
			select {
			case ps.pong <- struct{}{}:
			default:
			}
		default:
			return fmt.Errorf("frame type %d from a server: %w", f.Type, ErrBadFrame)
		}
	}
}

// deliver hands a reply or error frame to its request's waiter. A frame
// for a request nobody waits for any more is dropped: its caller gave up,
// or it answers a cancel frame (a server that predates the cancel frame
// answers it with an error, then still answers the request: internals.md
// §10.1). A frame for an id never sent on this stream breaks it.
func (ps *pooledStream) deliver(f frame) error {
	ps.mu.Lock()
	w, ok := ps.waiters[f.RequestID]
	delete(ps.waiters, f.RequestID)
	asked := f.RequestID <= ps.highest
	ps.mu.Unlock()
	switch {
	case ok:
		w <- decodeResult(f)
	case !asked:
		return fmt.Errorf("frame type %d for request %d, never sent on this stream: %w", f.Type, f.RequestID, ErrBadFrame)
	}
	return nil
}

// decodeResult turns a reply or error frame into a waiter's result.
func decodeResult(f frame) result {
	if f.Type == typeReply {
		return result{resp: f.Payload}
	}
	msg, err := parseErrorPayload(f.Payload)
	if err != nil {
		return result{err: err}
	}
	return result{err: &remoteMessage{msg}}
}

// remoteMessage is an error frame's message before the caller names its
// peer and op (Client.Call turns it into a *RemoteError).
type remoteMessage struct{ msg string }

func (e *remoteMessage) Error() string { return e.msg }

// fail breaks ps with err (the first error sticks) and fails every waiter.
func (ps *pooledStream) fail(err error) {
	ps.mu.Lock()
	if ps.broken == nil {
		ps.broken = err
	}
	ws := ps.waiters
	ps.waiters = map[uint64]chan result{}
	ps.mu.Unlock()
	for _, w := range ws {
		w <- result{err: err}
	}
}

// failed is why ps broke, nil while it is usable.
func (ps *pooledStream) failed() error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.broken
}
