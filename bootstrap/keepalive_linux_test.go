package bootstrap

import (
	"context"
	"net"
	"syscall"
	"testing"
)

// An accepted client connection carries no TCP keep-alive: its four
// setsockopt calls per connection are spent for nothing (clientListenConfig).
func TestClientConnectionsSkipKeepAlive(t *testing.T) {
	ln, err := clientListenConfig.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dialed, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer dialed.Close()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if on := keepAliveOn(t, c.(*net.TCPConn)); on {
		t.Fatal("SO_KEEPALIVE is set on an accepted client connection")
	}
	// The same check sees Go's default, so it can fail.
	if on := keepAliveOn(t, dialed.(*net.TCPConn)); !on {
		t.Fatal("SO_KEEPALIVE is off on a default dialed connection: the check reads nothing")
	}
}

func keepAliveOn(t *testing.T, c *net.TCPConn) bool {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var serr error
	if err := raw.Control(func(fd uintptr) {
		v, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE)
	}); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatal(serr)
	}
	return v != 0
}
