package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/quic-go/quic-go"
	"go.uber.org/zap"

	"github.com/narad/narad/domain"
)

// ClientOptions configure a Client.
type ClientOptions struct {
	// Secret is the cluster secret; required.
	Secret []byte
	// Log receives authentication failures and dial failures; required.
	Log *zap.Logger
}

// Client calls peers: one QUIC connection per peer address, reused by every
// call and shared by concurrent dialers; on it, streams pooled per lane
// (lanes.go), each shared by many calls matched by request id. Safe for
// concurrent use. Close ends every connection and waits for its dials and
// stream readers.
type Client struct {
	secret []byte
	log    *zap.Logger
	udp    *net.UDPConn
	tr     *quic.Transport

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	peers  map[string]*peer
	closed bool

	nextID atomic.Uint64
	dials  atomic.Int64 // successful dials, for tests
}

// NewClient binds an ephemeral UDP socket for the client's connections.
func NewClient(o ClientOptions) (*Client, error) {
	if len(o.Secret) == 0 {
		return nil, fmt.Errorf("quicpeer: new client: %w", ErrNoSecret)
	}
	if o.Log == nil {
		return nil, errors.New("quicpeer: new client: nil logger")
	}
	udp, err := net.ListenUDP("udp", nil)
	if err != nil {
		return nil, fmt.Errorf("quicpeer: new client: bind udp: %w", err)
	}
	secret := append([]byte(nil), o.Secret...)
	ctx, cancel := context.WithCancel(context.Background())
	return &Client{
		secret: secret,
		log:    o.Log.Named("quicpeer"),
		udp:    udp,
		tr:     &quic.Transport{Conn: udp, StatelessResetKey: statelessResetKey(secret)},
		ctx:    ctx,
		cancel: cancel,
		peers:  make(map[string]*peer),
	}, nil
}

// Call sends op with req to the node at peerAddr and returns its reply.
// Without a deadline on ctx the call gets the 5 s reply default. Errors wrap
// ErrUnreachable, ErrTimeout (and context.DeadlineExceeded), ErrAuth,
// ErrFrameTooLarge, ErrBadFrame, ErrRemote (a *RemoteError, maybe
// ErrUnsupportedOp), ErrClosed, or context.Canceled; and every error wraps
// domain.ErrNotSent (the request never left: the peer did not run it) or
// domain.ErrNoAnswer (it may have run).
func (c *Client) Call(ctx context.Context, peerAddr string, op Op, req []byte) ([]byte, error) {
	if 1+len(req) > framePayloadMaxBytes {
		return nil, fmt.Errorf("quicpeer: call op %d on %s: request of %d bytes: %w: %w", op, peerAddr, len(req), ErrFrameTooLarge, domain.ErrNotSent)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, replyDefaultTimeout)
		defer cancel()
	}
	pc, err := c.conn(ctx, peerAddr)
	sent := false
	if err == nil {
		var resp []byte
		if resp, sent, err = c.exchange(ctx, pc, peerAddr, op, req); err == nil {
			return resp, nil
		}
		if pc.conn.Context().Err() != nil {
			c.drop(peerAddr, pc)
		}
	}
	return nil, fmt.Errorf("quicpeer: call op %d on %s: %w", op, peerAddr, transportClass(classify(ctx, err), sent))
}

// transportClass wraps a call failure in the port's transport class: the
// request may have run (domain.ErrNoAnswer) or surely did not
// (domain.ErrNotSent).
func transportClass(err error, sent bool) error {
	if sent {
		return fmt.Errorf("%w: %w", domain.ErrNoAnswer, err)
	}
	return fmt.Errorf("%w: %w", domain.ErrNotSent, err)
}

// Close ends every connection, stops dials and releases the UDP socket.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.cancel()
	var conns []*quic.Conn
	for _, p := range c.peers {
		if p.pc != nil {
			conns = append(conns, p.pc.conn)
		}
	}
	c.mu.Unlock()
	for _, conn := range conns {
		_ = conn.CloseWithError(codeShutdown, "node closing")
	}
	c.wg.Wait()
	return errors.Join(c.tr.Close(), c.udp.Close())
}

// classify maps a call failure onto the package's sentinels. Errors that
// already carry one pass through.
func classify(ctx context.Context, err error) error {
	var streamErr *quic.StreamError
	var netErr net.Error
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w: %w", ErrTimeout, ctx.Err())
	case ctx.Err() != nil:
		return ctx.Err()
	case isClassified(err):
		return err
	case errors.As(err, &streamErr) && streamErr.ErrorCode == codeAuth:
		return fmt.Errorf("peer refused our cluster proof (is the cluster secret the same on both nodes?): %w", ErrAuth)
	case errors.As(err, &streamErr) && streamErr.Remote:
		return fmt.Errorf("stream reset by peer (code %d): %w", streamErr.ErrorCode, ErrUnreachable)
	case errors.As(err, &streamErr):
		return fmt.Errorf("stream reset here (code %d): %w", streamErr.ErrorCode, ErrUnreachable)
	case isConnError(err):
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	case errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Errorf("%w: %w", ErrTimeout, context.DeadlineExceeded)
	}
	return fmt.Errorf("%w: %w", ErrUnreachable, err)
}

func isClassified(err error) bool {
	for _, s := range []error{ErrAuth, ErrFrameTooLarge, ErrBadFrame, ErrUnreachable, ErrTimeout, ErrRemote, ErrClosed} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// isConnError reports errors that end the whole connection.
func isConnError(err error) bool {
	var idle *quic.IdleTimeoutError
	var hs *quic.HandshakeTimeoutError
	var reset *quic.StatelessResetError
	var app *quic.ApplicationError
	var tr *quic.TransportError
	return errors.As(err, &idle) || errors.As(err, &hs) || errors.As(err, &reset) ||
		errors.As(err, &app) || errors.As(err, &tr) || errors.Is(err, net.ErrClosed)
}
