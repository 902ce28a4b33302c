package bootstrap

import (
	"net"
	"sync"
)

// limitListener holds at most n client connections open; further ones wait
// in the kernel's listen backlog until one closes (api.md §0.1
// http.max_connections: they are not refused).
type limitListener struct {
	net.Listener
	slots chan struct{}
}

func limitConnections(l net.Listener, n int) net.Listener {
	if n <= 0 {
		return l
	}
	return &limitListener{Listener: l, slots: make(chan struct{}, n)}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.slots <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
