package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"go.uber.org/zap"
)

// serverStream is one authenticated pooled stream (internals.md §10.1): a
// read loop that never blocks on a handler, each request on its own
// goroutine, replies written one at a time.
type serverStream struct {
	s    *Server
	st   *quic.Stream
	peer string
	ctx  context.Context // ends when the stream breaks or the server closes
	stop context.CancelFunc

	handlers sync.WaitGroup // request and pong goroutines of this stream

	wmu  sync.Mutex // one frame written at a time
	done bool       // guarded by wmu: the send side ended, nothing more is written

	mu       sync.Mutex
	inflight map[uint64]context.CancelFunc // running requests, by id
}

// serveStream checks the client's proof, answers with the server's, then
// serves the stream's requests until it ends. A client that ends its send
// side cleanly gets its running requests answered before the server ends
// its own; a broken stream cancels them.
func (s *Server) serveStream(conn *quic.Conn, pr proofs, st *quic.Stream) {
	defer s.wg.Done()
	peer := conn.RemoteAddr().String()
	_ = st.SetReadDeadline(time.Now().Add(proofReadTimeout))
	if !s.authenticate(st, pr, peer) {
		return
	}
	_ = st.SetReadDeadline(time.Time{})
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	unwatch := context.AfterFunc(st.Context(), cancel) // reset by the peer, or the connection ended
	defer unwatch()
	ss := &serverStream{s: s, st: st, peer: peer, ctx: ctx, stop: cancel, inflight: map[uint64]context.CancelFunc{}}
	err := ss.readLoop()
	switch {
	case errors.Is(err, io.EOF):
		ss.handlers.Wait()
		ss.end(func() { _ = st.Close() })
	case errors.Is(err, ErrBadFrame) || errors.Is(err, ErrFrameTooLarge):
		s.log.Warn("node rpc request refused", zap.String("peer", peer), zap.Error(err))
		st.CancelRead(codeBadFrame)
		ss.end(func() { refuse(st, err) })
	default:
		st.CancelRead(codeCancel)
		ss.end(func() { st.CancelWrite(codeCancel) })
	}
	cancel()
	ss.handlers.Wait()
}

// end runs finish (the last thing written or done to the send side) once
// no reply is being written, and stops every later reply.
func (ss *serverStream) end(finish func()) {
	ss.wmu.Lock()
	defer ss.wmu.Unlock()
	if !ss.done {
		ss.done = true
		finish()
	}
}

// refuse answers a frame that could not be read with an error frame
// naming the problem (best effort) and ends the send side.
func refuse(st *quic.Stream, err error) {
	if werr := writeFrame(st, frame{Type: typeError, Payload: errorPayload(err.Error())}); werr != nil {
		st.CancelWrite(codeBadFrame)
		return
	}
	_ = st.Close()
}

// authenticate reads the stream's first frame under the 64-byte cap and
// checks it is the client's proof; then it sends the server's proof. A
// failure resets the stream with codeAuth and is audit-logged.
func (s *Server) authenticate(st *quic.Stream, pr proofs, peer string) bool {
	f, err := readFrame(st, proofPayloadMaxBytes)
	if err == nil && !checkProof(f, pr.client) {
		err = errors.New("wrong cluster proof (different cluster secret?)")
	}
	if err != nil {
		s.log.Warn("node rpc stream refused: peer did not prove the cluster secret",
			zap.String("component", "audit"), zap.String("peer", peer), zap.Error(err))
		st.CancelRead(codeAuth)
		st.CancelWrite(codeAuth)
		return false
	}
	if err := writeFrame(st, frame{Type: typeAuth, Payload: pr.server}); err != nil {
		st.CancelWrite(codeCancel)
		return false
	}
	return true
}

// readLoop reads frames until the stream ends: requests start their
// goroutines, cancels cancel their request, pings get a pong. It returns
// io.EOF (wrapped) when the client ended its send side between frames.
func (ss *serverStream) readLoop() error {
	for {
		f, err := readServerFrame(ss.st)
		if err != nil {
			return err
		}
		switch f.Type {
		case typeRequest:
			if err := ss.start(f); err != nil {
				return err
			}
		case typeCancel:
			ss.cancel(f.RequestID)
		case typePing:
			ss.goAnswer(func() { _ = ss.write(frame{Type: typePong, RequestID: f.RequestID}) })
		case typePong:
		default:
			return fmt.Errorf("frame type %d from a client: %w", f.Type, ErrBadFrame)
		}
	}
}

// readServerFrame reads one frame: the header without a deadline (a pooled
// stream may idle), then the payload under a budget for its size.
func readServerFrame(st *quic.Stream) (frame, error) {
	var h [frameHeaderBytes]byte
	if _, err := io.ReadFull(st, h[:]); err != nil {
		return frame{}, readErr("frame header", err)
	}
	f, n, err := parseHeader(h[:], framePayloadMaxBytes)
	if err != nil {
		return frame{}, err
	}
	if f.Type == typeRequest && n == 0 {
		return frame{}, fmt.Errorf("request %d without an op: %w", f.RequestID, ErrBadFrame)
	}
	if n > 0 {
		_ = st.SetReadDeadline(time.Now().Add(transferBudget(n)))
		f.Payload, err = readPayload(st, n)
		_ = st.SetReadDeadline(time.Time{})
		if err != nil {
			return frame{}, readErr(fmt.Sprintf("frame payload of %d bytes", n), err)
		}
	}
	return f, nil
}

// start runs request f on its own goroutine under a context its cancel
// frame (or the stream's end) cancels. A request id already running on
// this stream is a broken frame sequence.
func (ss *serverStream) start(f frame) error {
	ctx, cancel := context.WithCancel(ss.ctx)
	ss.mu.Lock()
	_, dup := ss.inflight[f.RequestID]
	if !dup {
		ss.inflight[f.RequestID] = cancel
	}
	ss.mu.Unlock()
	if dup {
		cancel()
		return fmt.Errorf("request %d already running on this stream: %w", f.RequestID, ErrBadFrame)
	}
	ss.goAnswer(func() {
		defer cancel()
		ss.s.dispatch(ctx, ss, f)
		ss.mu.Lock()
		delete(ss.inflight, f.RequestID)
		ss.mu.Unlock()
	})
	return nil
}

// cancel ends the context of request id, if it still runs.
func (ss *serverStream) cancel(id uint64) {
	ss.mu.Lock()
	cancel := ss.inflight[id]
	ss.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// goAnswer runs f on a goroutine the stream and the server wait for.
func (ss *serverStream) goAnswer(f func()) {
	ss.handlers.Add(1)
	ss.s.wg.Add(1)
	go func() {
		defer ss.s.wg.Done()
		defer ss.handlers.Done()
		f()
	}()
}

// write sends one frame unless the send side ended; a failed write breaks
// the stream (its reader then ends and its requests are cancelled).
func (ss *serverStream) write(out frame) error {
	ss.wmu.Lock()
	defer ss.wmu.Unlock()
	if ss.done {
		return fmt.Errorf("stream ended: %w", ErrClosed)
	}
	if err := writeFrame(ss.st, out); err != nil {
		ss.done = true
		ss.st.CancelWrite(codeCancel)
		ss.st.CancelRead(codeCancel)
		ss.stop()
		return err
	}
	return nil
}

// writeFrame encodes f and writes it under a deadline of 5 s + 1 s per
// 256 KiB (internals.md §10.1).
func writeFrame(st *quic.Stream, f frame) error {
	buf, err := appendFrame(make([]byte, 0, frameHeaderBytes+len(f.Payload)), f)
	if err != nil {
		return err
	}
	_ = st.SetWriteDeadline(time.Now().Add(transferBudget(len(buf))))
	_, err = st.Write(buf)
	return err
}

// transferBudget is the time allowed to move n bytes on one stream.
func transferBudget(n int) time.Duration {
	chunks := (n + replyWriteChunkBytes - 1) / replyWriteChunkBytes
	return replyWriteBaseTimeout + time.Duration(chunks)*replyWritePerChunkTimeout
}
