package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/quic-go/quic-go"
	"go.uber.org/zap"
)

// serveStream runs one request: check the client's proof, answer with the
// server's, read the request, run its handler under a slot, write the reply.
func (s *Server) serveStream(conn *quic.Conn, pr proofs, st *quic.Stream) {
	defer s.wg.Done()
	defer st.CancelRead(codeDone) // no-op once the request's FIN was read
	peer := conn.RemoteAddr().String()
	_ = st.SetReadDeadline(time.Now().Add(requestHeaderReadTimeout))
	if !s.authenticate(st, pr, peer) {
		return
	}
	req, err := readRequest(st)
	if err != nil {
		s.refuseFrame(st, peer, err)
		return
	}
	_ = st.SetReadDeadline(time.Time{})
	s.dispatch(st, peer, req)
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

// readRequest reads the request frame: the header under the stream's
// current deadline, then the payload under a budget for its size.
func readRequest(st *quic.Stream) (frame, error) {
	var h [frameHeaderBytes]byte
	if _, err := io.ReadFull(st, h[:]); err != nil {
		return frame{}, readErr("request header", err)
	}
	f, n, err := parseHeader(h[:], framePayloadMaxBytes)
	if err != nil {
		return frame{}, err
	}
	if f.Type != typeRequest || n == 0 {
		return frame{}, fmt.Errorf("frame type %d with %d payload bytes where a request was due: %w", f.Type, n, ErrBadFrame)
	}
	_ = st.SetReadDeadline(time.Now().Add(transferBudget(n)))
	if f.Payload, err = readPayload(st, n); err != nil {
		return frame{}, readErr(fmt.Sprintf("request payload of %d bytes", n), err)
	}
	return f, nil
}

// refuseFrame answers a request that could not be read. A malformed or
// oversized frame gets an error frame naming the problem (best effort);
// a reset or timed-out stream gets nothing.
func (s *Server) refuseFrame(st *quic.Stream, peer string, err error) {
	if !errors.Is(err, ErrBadFrame) && !errors.Is(err, ErrFrameTooLarge) {
		st.CancelWrite(codeCancel)
		return
	}
	s.log.Warn("node rpc request refused", zap.String("peer", peer), zap.Error(err))
	st.CancelRead(codeBadFrame)
	if werr := writeFrame(st, frame{Type: typeError, Payload: errorPayload(err.Error())}); werr != nil {
		st.CancelWrite(codeBadFrame)
		return
	}
	_ = st.Close()
}

// dispatch runs the request's handler under a slot and writes its answer.
func (s *Server) dispatch(st *quic.Stream, peer string, req frame) {
	op := Op(req.Payload[0])
	h := s.handler(op)
	if h == nil {
		s.answer(st, peer, op, frame{Type: typeError, RequestID: req.RequestID, Payload: errorPayload(msgUnsupportedOp)})
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	stop := context.AfterFunc(st.Context(), cancel)
	defer stop()
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		s.unserved.Add(1)
		st.CancelWrite(codeCancel) // the requester gave up while waiting
		return
	}
	resp, err := s.run(ctx, h, op, req.Payload[1:])
	<-s.slots
	out := frame{Type: typeReply, RequestID: req.RequestID, Payload: resp}
	if err != nil {
		out = frame{Type: typeError, RequestID: req.RequestID, Payload: errorPayload(err.Error())}
	}
	s.answer(st, peer, op, out)
}

// run calls h, turning a panic into an error so one bad request cannot take
// the node down.
func (s *Server) run(ctx context.Context, h Handler, op Op, req []byte) (resp []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("node rpc handler panicked", zap.Uint8("op", uint8(op)), zap.Any("panic", r))
			resp, err = nil, errors.New("internal error")
		}
	}()
	return h(ctx, req)
}

// answer writes out (an oversized reply becomes an error frame) and ends
// the stream's send side.
func (s *Server) answer(st *quic.Stream, peer string, op Op, out frame) {
	if len(out.Payload) > framePayloadMaxBytes {
		s.log.Error("node rpc reply too large", zap.Uint8("op", uint8(op)), zap.Int("bytes", len(out.Payload)))
		out = frame{Type: typeError, RequestID: out.RequestID, Payload: errorPayload("reply exceeds the 16 MiB frame cap")}
	}
	if err := writeFrame(st, out); err != nil {
		s.log.Debug("node rpc reply not written", zap.String("peer", peer), zap.Uint8("op", uint8(op)), zap.Error(err))
		st.CancelWrite(codeCancel)
		return
	}
	_ = st.Close()
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
