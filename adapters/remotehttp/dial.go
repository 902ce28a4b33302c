package remotehttp

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"syscall"
)

// dialer opens the TCP connections of one remote's pool. It checks the
// port and host lists, resolves the host through the transport's resolver,
// refuses the dial if any address is refused, and dials the addresses in
// turn through a net.Dialer whose Control hook runs the guard again on the
// address actually being connected to (internals.md §7.7): whatever a
// resolver answers, no socket connects to a refused address.
type dialer struct {
	t      *Transport
	remote string // the remote's name, for the refusal count
	net    net.Dialer
}

func newDialer(t *Transport, remote string) *dialer {
	d := &dialer{t: t, remote: remote}
	d.net.Control = d.control
	return d
}

// DialContext is the http.Transport dial hook; address is "host:port" of
// a canonical URL.
func (d *dialer) DialContext(ctx context.Context, _, address string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, err
	}
	if err := d.t.checkDestination(host, port); err != nil {
		return nil, d.refused(err)
	}
	addrs, err := d.t.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if err := d.t.guard.check(a); err != nil {
			return nil, d.refused(err)
		}
	}
	return d.dialEach(ctx, addrs, uint16(port))
}

// dialEach dials the addresses in order and returns the first connection,
// else the first error.
func (d *dialer) dialEach(ctx context.Context, addrs []netip.Addr, port uint16) (net.Conn, error) {
	var first error
	for _, a := range addrs {
		conn, err := d.net.DialContext(ctx, "tcp", netip.AddrPortFrom(a.Unmap(), port).String())
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// control runs after the socket is made and before it connects, on the
// literal address being connected to.
func (d *dialer) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return d.refused(&RefusedError{Reason: ReasonUnspecified})
	}
	if !d.t.ports[int(ap.Port())] {
		return d.refused(&RefusedError{Reason: ReasonPort})
	}
	if err := d.t.guard.check(ap.Addr()); err != nil {
		return d.refused(err)
	}
	return nil
}

// refused counts a refused dial and returns err.
func (d *dialer) refused(err error) error {
	var r *RefusedError
	if errors.As(err, &r) {
		d.t.metrics(d.remote, r.Reason)
	}
	return err
}
