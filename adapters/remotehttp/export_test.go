package remotehttp

import (
	"context"
	"net"
	"time"

	"github.com/narad/narad/ports"
)

// SetClock replaces a client's clock, which ages its connections.
func SetClock(c ports.RemoteClient, now func() time.Time) {
	cl := c.(*client)
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.now = now
}

// ProxyConfigured reports whether a client's pools would use a proxy.
func ProxyConfigured(c ports.RemoteClient) bool {
	return c.(*client).newTransport().Proxy != nil
}

// DialWithoutPrecheck dials address through t's guarded net.Dialer alone,
// skipping the checks DialContext makes before it: only the Control hook
// stands between the caller and the socket.
func DialWithoutPrecheck(ctx context.Context, t *Transport, address string) (net.Conn, error) {
	return newDialer(t, "lab").net.DialContext(ctx, "tcp", address)
}
