package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// exchange runs one call on a pooled stream of op's lane: register a
// waiter for a fresh request id, write the request frame, wait for the
// frame carrying that id (internals.md §10.1).
//
// sent reports whether the server may have run the request: it is false
// when the call failed before the whole request frame was written (a
// partial frame breaks the stream, so the rest never arrives), or when the
// stream's proofs failed, which happens before any request is written.
func (c *Client) exchange(ctx context.Context, pc *peerConn, peerAddr string, op Op, req []byte) (resp []byte, sent bool, err error) {
	pc.calls.Add(1) // the silent-peer watchdog judges only connections with calls
	defer pc.calls.Add(-1)
	ps, err := c.stream(ctx, pc, peerAddr, laneOf(op))
	if err != nil {
		return nil, false, err
	}
	id := c.nextID.Add(1)
	buf := appendRequestFrame(make([]byte, 0, frameHeaderBytes+1+len(req)), id, op, req)
	w, err := ps.register(id)
	if err != nil {
		return nil, false, err
	}
	if err := ps.writeRequest(ctx, id, buf); err != nil {
		ps.forget(id)
		return nil, false, err
	}
	select {
	case r := <-w:
		return r.resp, true, remoteErr(r.err, peerAddr, op)
	case <-ctx.Done():
		if !c.giveUp(ctx, ps, id) {
			r := <-w // answered (or broken) as the caller gave up
			return r.resp, true, remoteErr(r.err, peerAddr, op)
		}
		return nil, true, ctx.Err()
	}
}

// remoteErr names the peer and op of an error frame's message.
func remoteErr(err error, peerAddr string, op Op) error {
	var msg *remoteMessage
	if errors.As(err, &msg) {
		return &RemoteError{Peer: peerAddr, Op: op, Message: msg.msg}
	}
	return err
}

// register makes a waiter for request id, unless ps broke.
func (ps *pooledStream) register(id uint64) (chan result, error) {
	w := make(chan result, 1)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.broken != nil {
		return nil, ps.broken
	}
	ps.waiters[id] = w
	ps.highest = max(ps.highest, id)
	return w, nil
}

// forget drops the waiter of a request that was not written.
func (ps *pooledStream) forget(id uint64) {
	ps.mu.Lock()
	delete(ps.waiters, id)
	ps.mu.Unlock()
}

// writeRequest writes one whole frame under the stream's write lock before
// ctx ends. A write that sent no byte leaves the stream usable; a partial
// one breaks it (the frame must never complete), failing the stream's
// other waiters.
func (ps *pooledStream) writeRequest(ctx context.Context, id uint64, buf []byte) error {
	if err := ps.lock(ctx); err != nil {
		return err
	}
	defer ps.unlock()
	deadline, _ := ctx.Deadline()
	ps.setWriting(id, deadline)
	stop := context.AfterFunc(ctx, func() { ps.interrupt(id) })
	n, err := ps.st.Write(buf)
	stop()
	ps.setWriting(0, time.Time{})
	switch {
	case err == nil:
		return nil
	case n > 0 || !isTimeout(err):
		ps.st.CancelWrite(codeCancel)
		ps.st.CancelRead(codeCancel)
		ps.fail(fmt.Errorf("write request: %w", err))
	}
	return fmt.Errorf("write request: %w", err)
}

// writeControl writes a small frame (cancel, ping) within budget and
// reports whether it was written. A frame that could not be written before
// the budget ended (the write lock held by a long request, or no byte
// sent) leaves the stream as it is (internals.md §10.1): an unsent cancel
// leaks nothing (the late reply is dropped on arrival). writeRequest
// breaks the stream itself on a partial write.
func (ps *pooledStream) writeControl(ctx context.Context, token uint64, buf []byte) bool {
	ctx, cancel := context.WithTimeout(ctx, transferBudget(len(buf)))
	defer cancel()
	return ps.writeRequest(ctx, token, buf) == nil
}

func (ps *pooledStream) lock(ctx context.Context) error {
	select {
	case ps.wlock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (ps *pooledStream) unlock() { <-ps.wlock }

// setWriting records which request is being written and sets the write
// deadline for it (zero: none).
func (ps *pooledStream) setWriting(id uint64, deadline time.Time) {
	ps.dlMu.Lock()
	ps.writing = id
	_ = ps.st.SetWriteDeadline(deadline)
	ps.dlMu.Unlock()
}

// interrupt ends the write of request id at once, if it is still running.
func (ps *pooledStream) interrupt(id uint64) {
	ps.dlMu.Lock()
	if ps.writing == id {
		_ = ps.st.SetWriteDeadline(time.Now())
	}
	ps.dlMu.Unlock()
}

// giveUp drops the waiter of request id, whose caller's ctx ended, and
// tells the server with a cancel frame; a deadline also triggers a
// liveness ping (liveness.go). Both are written off the caller's path.
// It reports false when the request was answered or its stream broke
// meanwhile: the waiter then holds the outcome.
func (c *Client) giveUp(ctx context.Context, ps *pooledStream, id uint64) bool {
	ps.mu.Lock()
	_, waiting := ps.waiters[id]
	delete(ps.waiters, id)
	ps.mu.Unlock()
	if !waiting {
		return false
	}
	buf, _ := appendFrame(make([]byte, 0, 2*frameHeaderBytes), frame{Type: typeCancel, RequestID: id})
	ping := errors.Is(ctx.Err(), context.DeadlineExceeded) && ps.pc.startPing()
	if ping {
		buf, _ = appendFrame(buf, frame{Type: typePing, RequestID: id})
	}
	token := c.nextID.Add(1)
	c.goSafe(func() {
		if ping {
			ps.drainPong() // a late pong of an earlier ping must not answer this one
		}
		written := ps.writeControl(c.ctx, token, buf)
		switch {
		case ping && written:
			c.awaitPong(ps)
		case ping:
			ps.pc.pinging.Store(false) // no ping went out: nothing to wait for
		}
	})
	return true
}

// isTimeout reports a write that ended on its deadline.
func isTimeout(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}
