package quicpeer

import (
	"context"
	"io"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
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

// The silent-peer watchdog (internals.md §10.1; issue 15): the backstop
// above needs a call to end on its deadline, and a commit's deadline is
// 30 s, so a peer cut off the network (not dead: no reset ever comes)
// held every call to it that long. watch runs beside each connection for
// its whole life. While calls are in flight on it and no QUIC packet
// arrives from the peer, it pings the peer once the silence passes
// silentPingAfterDuration (at most one ping at a time, one a second), and
// closes the connection once the silence reaches silentPeerAfterDuration.
// Every call waiting on the connection then fails at once: as "outcome
// unknown" (domain.ErrNoAnswer) when its request was written whole, as
// not sent (domain.ErrNotSent) when it was not, exactly as when the
// connection breaks any other way; the next call dials afresh. Any packet
// is life (a reply, a pong, the peer's ACK of our request bytes), so a
// slow peer whose handler answers nothing for a long time, or whose big
// reply trickles in, is never closed: its QUIC stack acknowledges the
// pings. A connection without calls in flight is never judged.

// watch is pc's silent-peer watchdog; it ends with the connection or the
// client.
func (c *Client) watch(pc *peerConn, addr string) {
	defer c.wg.Done()
	tick := time.NewTicker(silentCheckIntervalDuration)
	defer tick.Stop()
	heard, quietSince := pc.heard(), time.Now()
	var pinged time.Time
	for {
		select {
		case <-pc.conn.Context().Done():
			return
		case <-c.ctx.Done():
			return
		case now := <-tick.C:
			if h := pc.heard(); h != heard || pc.calls.Load() == 0 {
				heard, quietSince = h, now
				continue
			}
			switch quiet := now.Sub(quietSince); {
			case quiet >= silentPeerAfterDuration:
				c.log.Warn("node rpc peer silent with calls in flight; closing the connection",
					zap.String("peer", addr), zap.Duration("silent_for", quiet), zap.Int64("calls", pc.calls.Load()))
				c.drop(addr, pc) // the next call dials afresh, even before the close lands
				_ = pc.conn.CloseWithError(codeSilent, "peer silent")
				return
			case quiet >= silentPingAfterDuration && now.Sub(pinged) >= pingIntervalMin:
				if c.keepalive(pc) {
					pinged = now
				}
			}
		}
	}
}

// heard counts the QUIC packets received on pc's connection: what the
// watchdog takes for life.
func (pc *peerConn) heard() uint64 { return pc.conn.ConnectionStats().PacketsReceived }

// keepalive writes a ping on one of pc's streams that is open and not
// being written, off the watchdog's path, unless the last one is still
// being written; it reports whether one went. Its pong, or the peer's ACK
// of it, is what the watchdog waits for; nobody waits on the pong itself.
// It keeps apart from the deadline pings (startPing), whose write may wait
// seconds behind a large request.
func (c *Client) keepalive(pc *peerConn) bool {
	ps := pc.idleStream()
	if ps == nil || !pc.keepaliveBusy.CompareAndSwap(false, true) {
		return false
	}
	pc.keepalives.Add(1)
	token := c.nextID.Add(1)
	buf, _ := appendFrame(make([]byte, 0, frameHeaderBytes), frame{Type: typePing, RequestID: token})
	c.goSafe(func() {
		defer pc.keepaliveBusy.Store(false)
		ctx, cancel := context.WithTimeout(c.ctx, silentPeerAfterDuration)
		defer cancel()
		ps.writeControl(ctx, token, buf)
	})
	return true
}

// idleStream returns a stream of pc whose proofs were exchanged, that has
// not broken and that nobody is writing to, the control lane's first; nil
// when there is none.
func (pc *peerConn) idleStream() *pooledStream {
	for _, l := range []lane{laneControl, laneAck, laneConsume, laneProduce} {
		if ps := pc.lanes[l].idle(); ps != nil {
			return ps
		}
	}
	return nil
}

// idle returns a usable stream of the lane nobody is writing to, or nil.
func (sl *streamLane) idle() *pooledStream {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	for _, ps := range sl.streams {
		if ps == nil || len(ps.wlock) > 0 {
			continue
		}
		select {
		case <-ps.ready:
			if ps.openErr == nil && ps.failed() == nil {
				return ps
			}
		default:
		}
	}
	return nil
}
