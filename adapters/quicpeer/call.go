package quicpeer

import (
	"context"
	"errors"
	"fmt"

	"github.com/quic-go/quic-go"
	"go.uber.org/zap"
)

// exchange runs one call on its own stream: proof, request, server proof,
// reply. On a connection whose server already proved the secret, the
// request follows the client's proof at once; on a fresh connection the
// client sends nothing more until the server has proved it (§10.2). The
// stream is reset when ctx ends.
//
// sent reports whether the server may have run the request: it is false
// when the call failed before the whole request frame was handed to the
// stream (the rest never leaves: the stream is reset), or when the server
// refused our proof, which it checks before reading a request.
func (c *Client) exchange(ctx context.Context, pc *peerConn, peerAddr string, op Op, req []byte) (resp []byte, sent bool, err error) {
	st, err := pc.conn.OpenStreamSync(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("open stream: %w", err)
	}
	defer st.CancelRead(codeDone) // no-op once the reply's FIN was read
	deadline, _ := ctx.Deadline()
	_ = st.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() {
		st.CancelRead(codeCancel)
		st.CancelWrite(codeCancel)
	})
	defer stop()

	id := c.nextID.Add(1)
	buf, _ := appendFrame(make([]byte, 0, 2*frameHeaderBytes+proofBytes+1+len(req)), frame{Type: typeAuth, Payload: pc.proofs.client})
	proven := pc.proven.Load()
	if !proven {
		if err := c.handshake(st, pc, peerAddr, buf); err != nil {
			return nil, false, err
		}
		buf = buf[:0]
	}
	payload := append(append(make([]byte, 0, 1+len(req)), byte(op)), req...)
	if buf, err = appendFrame(buf, frame{Type: typeRequest, RequestID: id, Payload: payload}); err != nil {
		return nil, false, err
	}
	if n, err := st.Write(buf); err != nil {
		if n < len(buf) {
			st.CancelWrite(codeCancel) // a partial frame must never complete
			return nil, false, fmt.Errorf("write request: %w", err)
		}
		return nil, true, fmt.Errorf("write request: %w", err)
	}
	_ = st.Close()
	if proven {
		if err := c.verifyServer(st, pc, peerAddr); err != nil {
			return nil, !refusedProof(err), err
		}
	}
	resp, err = readReply(st, peerAddr, op, id)
	return resp, true, err
}

// refusedProof reports whether the server reset the stream over our proof
// (then it never read the request) or could not prove the secret itself.
func refusedProof(err error) bool {
	var streamErr *quic.StreamError
	return errors.Is(err, ErrAuth) || (errors.As(err, &streamErr) && streamErr.Remote && streamErr.ErrorCode == codeAuth)
}

// handshake sends the client's proof alone and waits for the server's.
func (c *Client) handshake(st *quic.Stream, pc *peerConn, peerAddr string, proofFrame []byte) error {
	if _, err := st.Write(proofFrame); err != nil {
		return fmt.Errorf("write proof: %w", err)
	}
	if err := c.verifyServer(st, pc, peerAddr); err != nil {
		return err
	}
	pc.proven.Store(true)
	return nil
}

// verifyServer reads the server's proof under the 64-byte cap. A server
// that cannot prove the secret gets nothing more on this stream.
func (c *Client) verifyServer(st *quic.Stream, pc *peerConn, peerAddr string) error {
	f, err := readFrame(st, proofPayloadMaxBytes)
	if err != nil {
		var streamErr *quic.StreamError
		if errors.As(err, &streamErr) && streamErr.Remote && streamErr.ErrorCode == codeAuth {
			c.log.Warn("node rpc peer refused our cluster proof", zap.String("component", "audit"), zap.String("peer", peerAddr))
		}
		return fmt.Errorf("read server proof: %w", err)
	}
	if !checkProof(f, pc.proofs.server) {
		st.CancelWrite(codeAuth)
		st.CancelRead(codeAuth)
		c.log.Warn("node rpc peer could not prove the cluster secret", zap.String("component", "audit"), zap.String("peer", peerAddr))
		return fmt.Errorf("peer could not prove the cluster secret: %w", ErrAuth)
	}
	return nil
}

// readReply reads the reply frame for request id.
func readReply(st *quic.Stream, peerAddr string, op Op, id uint64) ([]byte, error) {
	f, err := readFrame(st, framePayloadMaxBytes)
	if err != nil {
		return nil, fmt.Errorf("read reply: %w", err)
	}
	if f.Type == typeError {
		msg, err := parseErrorPayload(f.Payload)
		if err != nil {
			return nil, err
		}
		return nil, &RemoteError{Peer: peerAddr, Op: op, Message: msg}
	}
	if f.Type != typeReply || f.RequestID != id {
		return nil, fmt.Errorf("frame type %d for request %d where the reply to %d was due: %w", f.Type, f.RequestID, id, ErrBadFrame)
	}
	return f.Payload, nil
}
