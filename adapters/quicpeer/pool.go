package quicpeer

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"go.uber.org/zap"
)

// peerConn is one live connection to a peer, its two proofs and its
// lanes of pooled streams.
type peerConn struct {
	conn   *quic.Conn
	proofs proofs
	lanes  [laneCount]streamLane

	received atomic.Int64 // bytes read on any stream, for the liveness ping
	pinging  atomic.Bool  // a liveness ping is in flight
	lastPing atomic.Int64 // unix nanoseconds of the last liveness ping
	calls    atomic.Int64 // calls in flight, for the silent-peer watchdog
	// keepaliveBusy: a ping of the silent-peer watchdog is being written;
	// keepalives counts the watchdog's pings (tests).
	keepaliveBusy atomic.Bool
	keepalives    atomic.Int64
}

// peer is the pool entry of one address. Guarded by Client.mu.
type peer struct {
	pc      *peerConn
	dialing chan struct{} // closed when the dial in flight ends; nil when none
	dialErr error         // the last genuine dial failure
	backoff time.Duration
	retryAt time.Time // calls before this fail fast with dialErr
}

// conn returns the live connection to addr, dialing when there is none.
// One dial runs per peer under the client's context; a caller whose ctx
// ends stops waiting without cancelling the dial for others.
func (c *Client) conn(ctx context.Context, addr string) (*peerConn, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, ErrClosed
		}
		p := c.peers[addr]
		if p == nil {
			p = &peer{}
			c.peers[addr] = p
		}
		if p.pc != nil && p.pc.conn.Context().Err() == nil {
			pc := p.pc
			c.mu.Unlock()
			return pc, nil
		}
		p.pc = nil
		if p.dialing == nil {
			if wait := time.Until(p.retryAt); wait > 0 {
				err := p.dialErr
				c.mu.Unlock()
				return nil, fmt.Errorf("%w: in dial backoff for %v after: %v", ErrUnreachable, wait.Round(time.Millisecond), err)
			}
			p.dialing = make(chan struct{})
			c.wg.Add(1)
			go c.dial(addr, p, p.dialing)
		}
		done := p.dialing
		c.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// dial makes one connection to addr and records the outcome in p.
func (c *Client) dial(addr string, p *peer, done chan struct{}) {
	defer c.wg.Done()
	defer close(done)
	ctx, cancel := context.WithTimeout(c.ctx, dialTimeout)
	pc, err := c.connect(ctx, addr)
	cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	p.dialing = nil
	switch {
	case err != nil:
		p.backoff = min(max(2*p.backoff, dialBackoffMin), dialBackoffMax)
		p.retryAt = time.Now().Add(p.backoff)
		p.dialErr = err
		c.log.Debug("node rpc dial failed", zap.String("peer", addr), zap.Duration("backoff", p.backoff), zap.Error(err))
	case c.closed:
		_ = pc.conn.CloseWithError(codeShutdown, "node closing")
	default:
		p.backoff, p.retryAt, p.dialErr = 0, time.Time{}, nil
		p.pc = pc
		c.dials.Add(1)
		c.wg.Add(1)
		go c.watch(pc, addr)
	}
}

func (c *Client) connect(ctx context.Context, addr string) (*peerConn, error) {
	udpAddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", addr, err)
	}
	conn, err := c.tr.Dial(ctx, udpAddr, clientTLS(), quicConfig())
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	pr, err := connProofs(conn, c.secret)
	if err != nil {
		_ = conn.CloseWithError(codeAuthConn, "no keying material")
		return nil, err
	}
	return &peerConn{conn: conn, proofs: pr}, nil
}

// drop forgets pc if it is still addr's connection (it broke mid-call).
func (c *Client) drop(addr string, pc *peerConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.peers[addr]; p != nil && p.pc == pc {
		p.pc = nil
	}
}
