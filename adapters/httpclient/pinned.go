package httpclient

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// pinnedDialTimeout bounds the dial (and TLS handshake) of a Pinned
// connection.
const pinnedDialTimeout = 10 * time.Second

// Pinned is one keep-alive HTTP/1.1 connection to one server, used by one
// goroutine at a time, for single-message produces. A request leaves in one
// write and its answer is read on the calling goroutine. net/http's client
// hands every request to a writer goroutine and every answer back from a
// reader goroutine; for a load generator on the same cores as the server,
// those hand-offs cost about as much CPU as the server spends on the
// request (narad bench, README performance section).
//
// Answers are parsed by net/http (http.ReadResponse). Any transport or parse
// failure closes the connection, and the next call dials again; a call is
// never retried, because a produce whose answer was lost may have been
// accepted. Not safe for concurrent use.
type Pinned struct {
	c      *Client
	addr   string      // host:port to dial
	host   string      // Host header
	tlsCfg *tls.Config // nil for http://
	auth   string      // Authorization header value, "" without a user

	conn net.Conn
	br   *bufio.Reader
	wbuf []byte
}

// Pin returns a Pinned for server, one of c.Servers(). It does not dial.
func (c *Client) Pin(server string) (*Pinned, error) {
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" {
		return nil, fmt.Errorf("%w: %q: pin wants a base URL such as http://host:port", ErrBadServer, server)
	}
	p := &Pinned{c: c, addr: u.Host, host: u.Host}
	if u.Port() == "" {
		p.addr = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	if u.Scheme == "https" {
		p.tlsCfg = c.tlsConfig(u.Hostname())
	}
	if c.user != "" {
		p.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(c.user+":"+c.password))
	}
	return p, nil
}

// tlsConfig is the TLS configuration of c's transport when it has one, for
// host, speaking HTTP/1.1 only.
func (c *Client) tlsConfig(host string) *tls.Config {
	cfg := &tls.Config{}
	if t, ok := c.hc.Transport.(*http.Transport); ok && t.TLSClientConfig != nil {
		cfg = t.TLSClientConfig.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	cfg.NextProtos = []string{"http/1.1"}
	return cfg
}

// Produce sends one message to topic like Client.Produce (no key, no
// partition pin) on the pinned connection. A final answer that is neither
// a success nor an *APIError (101, or a 3xx: no redirect is followed)
// closes the connection.
func (p *Pinned) Produce(ctx context.Context, topic string, body []byte) error {
	if len(body) == 0 {
		return ErrEmptyMessage
	}
	path := topicPath(topic, "/produce")
	if err := p.ensureConn(ctx); err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	err := p.roundTrip(ctx, path, body)
	if err != nil && StatusOf(err) == 0 {
		p.Close()
	}
	return err
}

// Close closes the connection; the next call dials again.
func (p *Pinned) Close() error {
	if p.conn == nil {
		return nil
	}
	err := p.conn.Close()
	p.conn, p.br = nil, nil
	return err
}

func (p *Pinned) ensureConn(ctx context.Context) error {
	if p.conn != nil {
		return nil
	}
	d := net.Dialer{Timeout: pinnedDialTimeout}
	conn, err := d.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return err
	}
	if p.tlsCfg != nil {
		tc := tls.Client(conn, p.tlsCfg)
		hctx, cancel := context.WithTimeout(ctx, pinnedDialTimeout)
		defer cancel()
		if err := tc.HandshakeContext(hctx); err != nil {
			conn.Close()
			return err
		}
		conn = tc
	}
	p.conn, p.br = conn, bufio.NewReader(conn)
	return nil
}

// roundTrip writes one POST of body to path and reads its answer, bounded
// by the client's timeout and by ctx.
func (p *Pinned) roundTrip(ctx context.Context, path string, body []byte) error {
	deadline := time.Time{}
	if p.c.timeout > 0 {
		deadline = time.Now().Add(p.c.timeout)
	}
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	if err := p.conn.SetDeadline(deadline); err != nil {
		return err
	}
	conn := p.conn
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer func() {
		if !stop() && p.conn == conn {
			p.Close() // the deadline set by the cancel may land on the next call
		}
	}()
	if _, err := p.conn.Write(p.request(path, body)); err != nil {
		return p.failed(ctx, path, err)
	}
	resp, err := p.readFinal()
	if err != nil {
		return p.failed(ctx, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		apiErr := readAPIError(resp)
		return p.finish(ctx, path, resp, apiErr)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return p.finish(ctx, path, resp, fmt.Errorf("POST %s: unexpected status %d: %w", path, resp.StatusCode, ErrMalformedReply))
	}
	return p.finish(ctx, path, resp, nil)
}

// readFinal reads the final answer, passing over informational (1xx)
// ones such as 103 Early Hints, as net/http's client does.
func (p *Pinned) readFinal() (*http.Response, error) {
	for {
		resp, err := http.ReadResponse(p.br, nil)
		if err != nil || resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, err
		}
	}
}

// finish reads what is left of resp's body so the connection can carry the
// next request, and closes it when the server asked to. result is the
// call's outcome when the connection survives.
func (p *Pinned) finish(ctx context.Context, path string, resp *http.Response, result error) error {
	if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, maxReplyBody)); err != nil {
		p.Close()
		if result != nil {
			return result
		}
		return p.failed(ctx, path, err)
	}
	if resp.Close {
		p.Close()
	}
	return result
}

// failed wraps a transport error, naming ctx's error when that is what cut
// the call short.
func (p *Pinned) failed(ctx context.Context, path string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("POST %s: %w", path, cerr)
	}
	return fmt.Errorf("POST %s: %w", path, err)
}

// request renders the produce request into the connection's write buffer.
func (p *Pinned) request(path string, body []byte) []byte {
	b := append(p.wbuf[:0], "POST "...)
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, p.host...)
	b = append(b, "\r\nX-Narad-Client: "...)
	b = append(b, p.c.name...)
	b = append(b, "\r\nUser-Agent: "...)
	b = append(b, p.c.name...)
	b = append(b, "\r\nAccept: application/json\r\nContent-Type: application/octet-stream\r\n"...)
	if p.auth != "" {
		b = append(b, "Authorization: "...)
		b = append(b, p.auth...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	b = append(b, body...)
	p.wbuf = b
	return b
}
