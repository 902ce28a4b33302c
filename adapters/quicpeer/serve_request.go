package quicpeer

import (
	"context"
	"errors"

	"go.uber.org/zap"
)

// msgCancelled answers a request whose caller gave up before a handler
// slot freed; nobody waits for it, it only closes the request id.
const msgCancelled = "request cancelled before it ran"

// dispatch runs request req's handler under a slot of its class (an exempt
// op takes none) and writes its answer. A request whose caller gave up
// (cancel frame, broken stream) while it waited for a slot is answered
// without running.
func (s *Server) dispatch(ctx context.Context, ss *serverStream, req frame) {
	op := Op(req.Payload[0])
	h := s.handler(op)
	if h == nil {
		s.answer(ss, op, frame{Type: typeError, RequestID: req.RequestID, Payload: errorPayload(msgUnsupportedOp)})
		return
	}
	class := slotClassOf(op, req.Payload[1:])
	slots := s.slots.of(class)
	if slots != nil {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			s.unserved.Add(1)
			s.answer(ss, op, frame{Type: typeError, RequestID: req.RequestID, Payload: errorPayload(msgCancelled)})
			return
		}
	}
	resp, err := s.run(ctx, h, op, req.Payload[1:])
	if slots != nil && class != slotTransfer {
		<-slots
	}
	out := frame{Type: typeReply, RequestID: req.RequestID, Payload: resp}
	if err != nil {
		out = frame{Type: typeError, RequestID: req.RequestID, Payload: errorPayload(err.Error())}
	}
	s.answer(ss, op, out)
	if slots != nil && class == slotTransfer {
		<-slots // a transfer reply (up to 1 MiB) is written under its slot
	}
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

// answer writes out; an oversized reply becomes an error frame.
func (s *Server) answer(ss *serverStream, op Op, out frame) {
	if len(out.Payload) > framePayloadMaxBytes {
		s.log.Error("node rpc reply too large", zap.Uint8("op", uint8(op)), zap.Int("bytes", len(out.Payload)))
		out = frame{Type: typeError, RequestID: out.RequestID, Payload: errorPayload("reply exceeds the 16 MiB frame cap")}
	}
	if err := ss.write(out); err != nil {
		s.log.Debug("node rpc reply not written", zap.String("peer", ss.peer), zap.Uint8("op", uint8(op)), zap.Error(err))
	}
}
