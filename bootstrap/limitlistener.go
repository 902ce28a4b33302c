package bootstrap

import (
	"io"
	"net"
	"sync"
	"time"
)

// A connection that net/http closes right after an early answer (a 431, or
// a 413 sent before the body was read) still has the client's bytes in
// flight. Closing a TCP socket with unread input resets it, and a reset can
// overtake the answer; so the write side is shut first and what the client
// still sends is read and dropped until it closes its side (RFC 9112 §9.6),
// within these bounds.
const (
	// closeLingerMaxDuration bounds how long a closing connection drains.
	closeLingerMaxDuration = 2 * time.Second
	// closeLingerMaxBytes bounds how much it drains: above the largest body
	// a route reads (16 MiB as sent, batch produce), so an honest client's
	// bytes in flight fit.
	closeLingerMaxBytes = 64 << 20
)

// clientListener accepts the API's client connections (api.md §0.1). At
// most maxConns are open at once (0: no cap); further ones wait in the
// kernel's listen backlog until one closes (http.max_connections: they are
// not refused). Each connection counts its header blocks exactly against
// http.max_header_bytes (headMeter) and closes gracefully.
type clientListener struct {
	net.Listener
	slots          chan struct{} // nil: no cap
	maxHeaderBytes int64
}

func limitConnections(l net.Listener, maxConns, maxHeaderBytes int) net.Listener {
	cl := &clientListener{Listener: l, maxHeaderBytes: int64(maxHeaderBytes)}
	if maxConns > 0 {
		cl.slots = make(chan struct{}, maxConns)
	}
	return cl
}

func (l *clientListener) Accept() (net.Conn, error) {
	if l.slots != nil {
		l.slots <- struct{}{}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		l.release()
		return nil, err
	}
	return &clientConn{Conn: c, release: l.release, meter: newHeadMeter(l.maxHeaderBytes)}, nil
}

func (l *clientListener) release() {
	if l.slots != nil {
		<-l.slots
	}
}

// clientConn is one client connection. It keeps what net/http looks for
// on a *net.TCPConn (CloseWrite for its lingering close, ReadFrom for
// sendfile and splice); it does not offer WriteTo, because every byte read
// must pass the header meter.
type clientConn struct {
	net.Conn
	once    sync.Once
	release func()
	meter   *headMeter
}

// What net/http looks for on its connections (server.go closeWriter,
// response.ReadFrom).
var (
	_ interface{ CloseWrite() error } = (*clientConn)(nil)
	_ io.ReaderFrom                   = (*clientConn)(nil)
)

// Read passes the client's bytes through the header meter. From the first
// byte of a header block over the cap on, it hands net/http filler that
// continues that header block instead, so net/http's own size check fires
// and net/http answers its plain-text 431 and closes, as it does for any
// header block over its limit; the client's real bytes are drained at the
// close.
func (c *clientConn) Read(p []byte) (int, error) {
	if c.meter.over() {
		return c.meter.fill(p)
	}
	n, err := c.Conn.Read(p)
	if kept := c.meter.feed(p[:n]); kept < n {
		filled, _ := c.meter.fill(p[kept:n])
		return kept + filled, nil
	}
	return n, err
}

// CloseWrite sends the FIN that net/http's lingering close relies on, then
// drains the client's unread bytes until it closes, within the linger
// bounds, so the close that follows does not reset the answer away.
func (c *clientConn) CloseWrite() error {
	cw, ok := c.Conn.(interface{ CloseWrite() error })
	if !ok {
		return nil
	}
	if err := cw.CloseWrite(); err != nil {
		return err
	}
	if err := c.Conn.SetReadDeadline(time.Now().Add(closeLingerMaxDuration)); err != nil {
		return nil // closed meanwhile: nothing to drain
	}
	_, _ = io.CopyN(io.Discard, c.Conn, closeLingerMaxBytes)
	return nil
}

// ReadFrom writes r's bytes to the connection, with sendfile or splice
// when the connection offers them.
func (c *clientConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// Close closes the connection and frees its slot, once.
func (c *clientConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
