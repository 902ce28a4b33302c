package quicpeer

import (
	"io"
	"sync/atomic"
	"time"
)

// countingReader counts the bytes read through it into n: the liveness
// check's evidence that the connection is alive.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n.Add(int64(k))
	return k, err
}

// The liveness backstop (internals.md §10.1): a request that ended on its
// deadline sends a ping on its stream, off the caller's path, at most one
// per connection at a time and one per second. When the pong misses 1 s
// and nothing else arrived on the connection meanwhile (not one byte: a
// large reply still arriving is life), the connection is closed: its
// streams fail their waiters and the next call dials afresh instead of
// waiting out the idle timeout.

// startPing reports whether a ping may go out on pc now, and if so marks
// it in flight; endPing (in awaitPong) clears the mark.
func (pc *peerConn) startPing() bool {
	now := time.Now().UnixNano()
	if now-pc.lastPing.Load() < int64(pingIntervalMin) || !pc.pinging.CompareAndSwap(false, true) {
		return false
	}
	pc.lastPing.Store(now)
	return true
}

// awaitPong waits pongTimeout for ps's pong, counting from now (the ping
// was just written), and closes the connection when neither the pong nor
// any other frame arrived on it meanwhile.
func (c *Client) awaitPong(ps *pooledStream) {
	defer ps.pc.pinging.Store(false)
	before := ps.pc.received.Load()
	select {
	case <-ps.pong:
		return
	case <-c.ctx.Done():
		return
	case <-time.After(pongTimeout):
	}
	if ps.pc.received.Load() == before && ps.pc.conn.Context().Err() == nil {
		ps.log.Warn("node rpc peer did not answer a liveness ping; closing the connection")
		_ = ps.pc.conn.CloseWithError(codeSilent, "liveness ping unanswered")
	}
}

// drainPong drops a pong left over from an earlier ping on ps.
func (ps *pooledStream) drainPong() {
	select {
	case <-ps.pong:
	default:
	}
}

// goSafe runs f on a goroutine Close waits for, unless the client closed.
func (c *Client) goSafe(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.wg.Go(f)
}
