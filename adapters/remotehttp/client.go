package remotehttp

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// client sends requests to one remote over its own pool (internals.md
// §7.7). Connections are replaced every conn_max_age_ms by generations: a
// generation is one http.Transport (one pool); a request arriving when the
// current generation is older than the age retires it and starts a new
// one. A retired generation takes no new request, so none of its
// connections is reused: its idle ones close at once, its busy ones as
// soon as their request ends. No connection past its age ever carries a
// new request, and no race closes a connection another request just took.
type client struct {
	url           string // canonical endpoint URL
	host          string // its authority, as net/url reads it
	authorization string
	timeout       time.Duration
	maxAge        time.Duration
	newTransport  func() *http.Transport

	mu     sync.Mutex
	now    func() time.Time
	gen    *generation
	closed bool
}

// generation is one pool of a client.
type generation struct {
	rt      *http.Transport
	hc      *http.Client
	born    time.Time
	retired bool
}

// clientLimits are a remote's limits with a zero one replaced by its
// default (internals.md §7.1); NewClient does not re-check the bounds.
type clientLimits struct {
	maxConns                  int
	timeout, idle, connMaxAge time.Duration
}

func newClientLimits(l meta.RemoteLimits) clientLimits {
	out := clientLimits{
		maxConns:   int(l.MaxInFlight) + extraConnsCount,
		timeout:    time.Duration(l.RequestTimeoutMs) * time.Millisecond,
		idle:       time.Duration(l.IdleConnTimeoutMs) * time.Millisecond,
		connMaxAge: time.Duration(l.ConnMaxAgeMs) * time.Millisecond,
	}
	if l.MaxInFlight <= 0 {
		out.maxConns = defaultMaxInFlight + extraConnsCount
	}
	if out.timeout <= 0 {
		out.timeout = defaultRequestTimeout
	}
	if out.idle <= 0 {
		out.idle = defaultIdleConnTimeout
	}
	if out.connMaxAge <= 0 {
		out.connMaxAge = defaultConnMaxAge
	}
	return out
}

// NewClient builds a client for ep. The URL is canonicalized, the CA
// bundle parsed; nothing is resolved or dialed until the first request.
func (t *Transport) NewClient(ep ports.RemoteEndpoint) (ports.RemoteClient, error) {
	u, err := parseRemoteURL(ep.URL)
	if err != nil {
		return nil, err
	}
	parsed, err := url.Parse(u.String())
	if err != nil {
		return nil, fmt.Errorf("%w: url does not parse in canonical form", domain.ErrRemoteURL)
	}
	tlsConf, err := tlsConfig(u.host, ep.CAPEM)
	if err != nil {
		return nil, err
	}
	limits := newClientLimits(ep.Limits)
	d := newDialer(t, ep.Name)
	return &client{
		url:           u.String(),
		host:          parsed.Host,
		authorization: ep.Authorization,
		timeout:       limits.timeout,
		maxAge:        limits.connMaxAge,
		newTransport:  func() *http.Transport { return newPool(d, tlsConf, limits) },
		now:           time.Now,
	}, nil
}

// newPool is one generation's http.Transport: no proxy, HTTP/1.1 only,
// every dial through the guarded dialer.
func newPool(d *dialer, tlsConf *tls.Config, limits clientLimits) *http.Transport {
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	return &http.Transport{
		Proxy:                  nil, // HTTP_PROXY and HTTPS_PROXY are ignored
		DialContext:            d.DialContext,
		TLSClientConfig:        tlsConf,
		ForceAttemptHTTP2:      false,
		TLSNextProto:           map[string]func(string, *tls.Conn) http.RoundTripper{},
		Protocols:              protocols,
		MaxConnsPerHost:        limits.maxConns,
		MaxIdleConnsPerHost:    limits.maxConns,
		MaxIdleConns:           limits.maxConns,
		IdleConnTimeout:        limits.idle,
		DisableCompression:     true,
		MaxResponseHeaderBytes: responseHeaderMaxBytes,
	}
}

// Do sends req within the remote's request timeout and ctx. A 3xx is an
// answer; the answer body is cut at ports.RemoteAnswerBodyMaxBytes.
func (c *client) Do(ctx context.Context, req ports.RemoteRequest) (ports.RemoteAnswer, error) {
	if err := ctx.Err(); err != nil {
		return ports.RemoteAnswer{}, err
	}
	reqCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	trace := &connTrace{}
	zipped := false
	if req.Compress && req.ContentEncoding == "" {
		if req.Body, zipped = compressed(req.Body); zipped {
			req.ContentEncoding = zstdEncoding
		}
	}
	httpReq, err := c.newRequest(httptrace.WithClientTrace(reqCtx, trace.hooks()), req)
	if err != nil {
		return ports.RemoteAnswer{}, err
	}
	gen := c.acquire()
	defer c.release(gen)
	resp, err := gen.hc.Do(httpReq)
	if err != nil {
		return ports.RemoteAnswer{}, c.classify(ctx, reqCtx, err, trace)
	}
	answer, err := readAnswer(resp)
	if err != nil {
		return ports.RemoteAnswer{}, c.classify(ctx, reqCtx, err, trace)
	}
	trace.fill(&answer, resp)
	answer.Compressed, answer.WireBytes = zipped, len(req.Body)
	return answer, nil
}

// newRequest builds the HTTP request: the endpoint path plus req.Path,
// the JSON body, the Authorization header unless anonymous.
func (c *client) newRequest(ctx context.Context, req ports.RemoteRequest) (*http.Request, error) {
	if req.Path != "" && !strings.HasPrefix(req.Path, "/") {
		return nil, fmt.Errorf("%w: request path does not start with /", domain.ErrRemoteURL)
	}
	var body io.Reader
	if len(req.Body) > 0 {
		body = bytes.NewReader(req.Body)
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	target := c.url
	if req.Path != "" {
		target = strings.TrimSuffix(c.url, "/") + req.Path // "/base/" + "/v1" is "/base/v1"
	}
	r, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil || r.URL.Host != c.host || r.URL.User != nil || r.URL.Fragment != "" {
		return nil, fmt.Errorf("%w: request method or path does not form a request to the remote", domain.ErrRemoteURL)
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if req.ContentEncoding != "" {
		r.Header.Set("Content-Encoding", req.ContentEncoding)
	}
	if c.authorization != "" && !req.Anonymous {
		r.Header.Set("Authorization", c.authorization)
	}
	r.Header.Set("User-Agent", userAgent)
	return r, nil
}

// acquire returns the generation a new request uses, replacing the
// current one when it has reached its age.
func (c *client) acquire() *generation {
	c.mu.Lock()
	old := c.gen
	if old != nil && c.now().Sub(old.born) < c.maxAge {
		c.mu.Unlock()
		return old
	}
	if old != nil {
		old.retired = true
	}
	g := c.newGeneration()
	c.gen = g
	c.mu.Unlock()
	if old != nil {
		old.rt.CloseIdleConnections()
	}
	return g
}

// newGeneration starts a pool; c.mu is held.
func (c *client) newGeneration() *generation {
	rt := c.newTransport()
	return &generation{
		rt: rt,
		hc: &http.Client{
			Transport: rt,
			// A 3xx is the answer: the Authorization header never
			// reaches a Location host (internals.md §7.7).
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		born: c.now(),
	}
}

// release ends a request on g: a retired generation, or any after Close,
// closes the connection the request just gave back.
func (c *client) release(g *generation) {
	c.mu.Lock()
	closeIdle := g.retired || c.closed
	c.mu.Unlock()
	if closeIdle {
		g.rt.CloseIdleConnections()
	}
}

// Close closes the idle connections; requests in flight finish and close
// theirs when they end.
func (c *client) Close() {
	c.mu.Lock()
	c.closed = true
	g := c.gen
	c.mu.Unlock()
	if g != nil {
		g.rt.CloseIdleConnections()
	}
}
