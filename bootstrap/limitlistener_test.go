package bootstrap

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/narad/narad/bootstrap/config"
)

// ensure that connections past the cap wait (not refused) and are accepted once one closes.
func TestConnectionCapQueuesExtraConnections(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := limitConnections(raw, 1, 64<<10)
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

// tcpPair is a connected pair over loopback: the server end wrapped as the
// client listener wraps it, and the client end.
func tcpPair(t *testing.T, maxHeaderBytes int) (*clientConn, net.Conn) {
	t.Helper()
	noLeaks(t)
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	l := limitConnections(raw, 0, maxHeaderBytes)
	client, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return server.(*clientConn), client
}

// ensure that CloseWrite sends the FIN at once and then drains what the
// client still sends until the client closes, well within the linger bound.
func TestCloseWriteDrainsUntilTheClientCloses(t *testing.T) {
	server, client := tcpPair(t, 64<<10)
	if _, err := client.Write(make([]byte, 1<<20)); err != nil { // unread by the server
		t.Fatal(err)
	}
	done := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		_ = server.CloseWrite()
		done <- time.Since(start)
	}()
	if err := client.SetReadDeadline(time.Now().Add(answerMaxDuration)); err != nil {
		t.Fatal(err)
	}
	if n, err := client.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("the client saw %d bytes, %v; want the FIN", n, err)
	}
	client.Close()
	select {
	case d := <-done:
		if d >= closeLingerMaxDuration {
			t.Fatalf("the drain ran %v, to its bound, though the client closed", d)
		}
	case <-time.After(answerMaxDuration):
		t.Fatal("the drain never ended")
	}
}

// ensure that the connection keeps sendfile/splice: ReadFrom writes the
// whole source to the client.
func TestClientConnReadFrom(t *testing.T) {
	server, client := tcpPair(t, 64<<10)
	want := bytes.Repeat([]byte("narad"), 1000)
	go func() {
		_, _ = server.ReadFrom(bytes.NewReader(want))
		_ = server.CloseWrite()
	}()
	if err := client.SetReadDeadline(time.Now().Add(answerMaxDuration)); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(client)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
}

// ensure that a connection closed after an early answer frees its slot:
// with a cap of one, the next client is served once the first is answered
// 431 and hangs up.
func TestEarlyAnswerFreesTheSlot(t *testing.T) {
	addr := apiServer(t, func(h *config.HTTP) { h.MaxConnections = 1 })
	conn, br := dialAPI(t, addr)
	write(t, conn, headerBlock(t, config.Default().HTTP.MaxHeaderBytes+1))
	if status, _ := readAnswer(t, conn, br); status != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("%d", status)
	}
	conn.Close()
	next, nbr := dialAPI(t, addr)
	write(t, next, []byte("GET /healthz HTTP/1.1\r\nHost: narad\r\n\r\n"))
	if status, _ := readAnswer(t, next, nbr); status != http.StatusOK {
		t.Fatalf("%d", status)
	}
}
