package fake

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.RemoteTransport = (*RemoteTransport)(nil)

// RemoteTransport is a ports.RemoteTransport for use-case tests: no socket,
// every request goes to the Handler of the client's URL, in memory. A
// request asking for compression is marked Content-Encoding: zstd but sent
// as is.
// CheckURL accepts https URLs, lowercases them and refuses hosts listed by
// Refuse. Clients records every endpoint a client was built for.
type RemoteTransport struct {
	mu        sync.Mutex
	handlers  map[string]http.Handler // by canonical URL
	refused   map[string]bool
	endpoints []ports.RemoteEndpoint
	Allowlist bool
}

// NewRemoteTransport returns a transport with no targets.
func NewRemoteTransport() *RemoteTransport {
	return &RemoteTransport{handlers: map[string]http.Handler{}, refused: map[string]bool{}}
}

// Serve routes requests to url through h.
func (t *RemoteTransport) Serve(url string, h http.Handler) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.handlers[strings.ToLower(url)] = h
}

// Refuse makes the guard refuse host.
func (t *RemoteTransport) Refuse(host string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.refused[host] = true
}

// Endpoints returns every endpoint a client was built for, in order.
func (t *RemoteTransport) Endpoints() []ports.RemoteEndpoint {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]ports.RemoteEndpoint(nil), t.endpoints...)
}

func (t *RemoteTransport) CheckURL(_ context.Context, raw string) (string, error) {
	u := strings.ToLower(raw)
	host, ok := strings.CutPrefix(u, "https://")
	if !ok || host == "" {
		return "", fmt.Errorf("%w: want https://host[:port][/path]", domain.ErrRemoteURL)
	}
	host, _, _ = strings.Cut(host, "/")
	host, _, _ = strings.Cut(host, ":")
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.refused[host] {
		return "", fmt.Errorf("%w: %s resolves to a loopback address", domain.ErrDestinationRefused, host)
	}
	return u, nil
}

func (t *RemoteTransport) NewClient(ep ports.RemoteEndpoint) (ports.RemoteClient, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endpoints = append(t.endpoints, ep)
	return &remoteClient{t: t, ep: ep}, nil
}

func (t *RemoteTransport) AllowlistSet() bool { return t.Allowlist }

type remoteClient struct {
	t  *RemoteTransport
	ep ports.RemoteEndpoint
}

func (c *remoteClient) Do(ctx context.Context, req ports.RemoteRequest) (ports.RemoteAnswer, error) {
	if err := ctx.Err(); err != nil {
		return ports.RemoteAnswer{}, err
	}
	c.t.mu.Lock()
	h := c.t.handlers[c.ep.URL]
	c.t.mu.Unlock()
	if h == nil {
		return ports.RemoteAnswer{}, fmt.Errorf("%w: no fake target at %s", domain.ErrRemoteUnavailable, c.ep.URL)
	}
	r := httptest.NewRequestWithContext(ctx, req.Method, c.ep.URL+req.Path, strings.NewReader(string(req.Body)))
	if !req.Anonymous {
		r.Header.Set("Authorization", c.ep.Authorization)
	}
	if req.ContentEncoding != "" {
		r.Header.Set("Content-Encoding", req.ContentEncoding)
	}
	compressed := req.Compress && req.ContentEncoding == "" && len(req.Body) > 0
	if compressed { // marked, not encoded: the fake target reads the header
		r.Header.Set("Content-Encoding", "zstd")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	body := w.Body.Bytes()
	if len(body) > ports.RemoteAnswerBodyMaxBytes {
		body = body[:ports.RemoteAnswerBodyMaxBytes]
	}
	return ports.RemoteAnswer{Status: w.Code, Body: body, Compressed: compressed, WireBytes: len(req.Body)}, nil
}

func (c *remoteClient) Close() {}
