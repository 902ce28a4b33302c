package httpfloor

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
)

// serveLoop is the least an HTTP/1.1 server can do per request, to set
// against net/http: one goroutine per connection that parses each request
// with http.ReadRequest, runs h with a buffering writer and sends the
// answer in one write. No background read, no timeouts, no Connection:
// close handling: a yardstick, not a server.
func serveLoop(ln net.Listener, h http.Handler) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go serveConn(c, h)
	}
}

func serveConn(c net.Conn, h http.Handler) {
	defer c.Close()
	br := bufio.NewReader(c)
	w := &bufferedWriter{header: http.Header{}}
	var out []byte
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		clear(w.header)
		w.status, w.body = 0, w.body[:0]
		h.ServeHTTP(w, req)
		_, _ = io.Copy(io.Discard, req.Body)
		out = append(out[:0], "HTTP/1.1 "...)
		out = strconv.AppendInt(out, int64(w.status), 10)
		out = append(out, ' ')
		out = append(out, http.StatusText(w.status)...)
		out = append(out, "\r\nContent-Type: "...)
		out = append(out, w.header.Get("Content-Type")...)
		out = append(out, "\r\nContent-Length: "...)
		out = strconv.AppendInt(out, int64(len(w.body)), 10)
		out = append(out, "\r\n\r\n"...)
		out = append(out, w.body...)
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

// bufferedWriter keeps a handler's answer until the loop sends it.
type bufferedWriter struct {
	header http.Header
	status int
	body   []byte
}

func (w *bufferedWriter) Header() http.Header { return w.header }
func (w *bufferedWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}
func (w *bufferedWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.body = append(w.body, p...)
	return len(p), nil
}
