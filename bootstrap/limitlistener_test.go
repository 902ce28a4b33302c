package bootstrap

import (
	"net"
	"testing"
	"time"
)

// ensure that connections past the cap wait (not refused) and are accepted once one closes.
func TestConnectionCapQueuesExtraConnections(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := limitConnections(raw, 1)
	defer l.Close()
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatalf("second connection refused: %v", err)
		}
		return c
	}
	c1, c2 := dial(), dial()
	defer c1.Close()
	defer c2.Close()
	first := <-accepted
	select {
	case <-accepted:
		t.Fatal("a connection past the cap was accepted")
	case <-time.After(100 * time.Millisecond): // proving an absence needs a bounded wait
	}
	first.Close()
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting connection was never accepted")
	}
}
