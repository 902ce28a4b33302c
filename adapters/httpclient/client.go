package httpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultClientName is the X-Narad-Client value when Options.ClientName is empty.
const DefaultClientName = "narad-httpclient"

// DefaultTimeout bounds one request when Options.Timeout is zero. A consume
// gets its long-poll wait on top.
const DefaultTimeout = 30 * time.Second

const (
	// maxErrorBody is how much of an error answer is read (api.md Appendix B.1).
	maxErrorBody = 8 << 10
	// maxReplyBody bounds a successful answer; a batch consume holds at most
	// 8 MiB of envelopes (api.md §2.14.3), topic pages far less.
	maxReplyBody = 64 << 20
)

var (
	// ErrNoServer is returned by New without any server address.
	ErrNoServer = errors.New("httpclient: no server address")
	// ErrBadServer is returned by New for an address that is not an http(s) URL.
	ErrBadServer = errors.New("httpclient: bad server address")
	// ErrMalformedReply wraps a successful answer whose body does not have the
	// shape the spec gives it.
	ErrMalformedReply = errors.New("httpclient: malformed reply")
)

// Options configure a Client.
type Options struct {
	// Servers are base URLs such as http://127.0.0.1:7942; requests rotate
	// over them. At least one is required.
	Servers []string
	// User and Password are sent as HTTP Basic credentials when User is set.
	User     string
	Password string
	// HTTPClient sends the requests; nil uses a client with a connection pool
	// sized for many concurrent requests and no overall timeout of its own.
	HTTPClient *http.Client
	// ClientName is sent as X-Narad-Client and User-Agent, e.g. "narad-cli/v3.0.0".
	ClientName string
	// Timeout bounds each request (DefaultTimeout when zero, none when negative).
	Timeout time.Duration
}

// Client talks to one Narad cluster. It is safe for concurrent use.
type Client struct {
	servers  []string
	user     string
	password string
	hc       *http.Client
	name     string
	timeout  time.Duration
	next     atomic.Uint64
}

// New checks the options and returns a Client.
func New(o Options) (*Client, error) {
	if len(o.Servers) == 0 {
		return nil, ErrNoServer
	}
	servers := make([]string, 0, len(o.Servers))
	for _, s := range o.Servers {
		base, err := normalizeServer(s)
		if err != nil {
			return nil, err
		}
		servers = append(servers, base)
	}
	c := &Client{servers: servers, user: o.User, password: o.Password, hc: o.HTTPClient, name: o.ClientName, timeout: o.Timeout}
	if c.hc == nil {
		c.hc = defaultHTTPClient()
	}
	if c.name == "" {
		c.name = DefaultClientName
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	return c, nil
}

// Servers returns the normalized base URLs, in rotation order.
func (c *Client) Servers() []string { return append([]string(nil), c.servers...) }

// normalizeServer accepts a base URL, or host:port alone, which means
// http://host:port (as curl reads it).
func normalizeServer(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s != "" && !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrBadServer, s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return "", fmt.Errorf("%w: %q: want http://host:port or https://host:port", ErrBadServer, s)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("%w: %q: no query, fragment or user info allowed", ErrBadServer, s)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 512
	t.MaxIdleConnsPerHost = 128
	return &http.Client{Transport: t}
}

// APIError is an answer with status >= 400.
type APIError struct {
	Status int
	// Message is the `error` field of a JSON error body, else the trimmed
	// body text, else the status text.
	Message string
	// RetryAfter is the Retry-After header when it held whole seconds.
	RetryAfter time.Duration
	// body is the answer as read (at most 8 KiB), for routes whose error
	// bodies carry more than `error`.
	body []byte
}

func (e *APIError) Error() string { return fmt.Sprintf("http %d: %s", e.Status, e.Message) }

// StatusOf returns the HTTP status of an *APIError in err's chain, or 0.
func StatusOf(err error) int {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// request is one call of the API.
type request struct {
	method      string
	path        string // escaped, starting with /
	query       url.Values
	body        []byte
	contentType string
	extra       time.Duration // added to the timeout (long polls)
}

// reply is a successful answer, its body read.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (c *Client) pick() string {
	n := c.next.Add(1) - 1
	return c.servers[n%uint64(len(c.servers))]
}

// do sends r to the next server and reads the answer; a status >= 400 is an *APIError.
func (c *Client) do(ctx context.Context, r request) (reply, error) {
	u := c.pick() + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout+r.extra)
		defer cancel()
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("X-Narad-Client", c.name)
	req.Header.Set("User-Agent", c.name)
	req.Header.Set("Accept", "application/json")
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	if c.user != "" {
		req.SetBasicAuth(c.user, c.password)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return reply{}, readAPIError(resp)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBody+1))
	if err != nil {
		return reply{}, fmt.Errorf("%s %s: read answer: %w", r.method, r.path, err)
	}
	if len(b) > maxReplyBody {
		return reply{}, fmt.Errorf("%s %s: answer over %d bytes: %w", r.method, r.path, maxReplyBody, ErrMalformedReply)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// readAPIError turns an error answer into an *APIError, reading at most 8 KiB.
func readAPIError(resp *http.Response) *APIError {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &APIError{Status: resp.StatusCode, Message: errorMessage(b), body: b}
	if e.Message == "" {
		e.Message = strings.ToLower(http.StatusText(resp.StatusCode))
	}
	if secs, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && secs >= 0 {
		e.RetryAfter = time.Duration(secs) * time.Second
	}
	return e
}

// errorMessage is the `error` field of a JSON error body, else the trimmed text.
func errorMessage(b []byte) string {
	var eb struct {
		Error *string `json:"error"`
	}
	if json.Unmarshal(b, &eb) == nil && eb.Error != nil {
		return *eb.Error
	}
	return strings.TrimSpace(string(b))
}

// getJSON sends a GET and decodes a 200 body into v.
func (c *Client) getJSON(ctx context.Context, path string, q url.Values, v any) error {
	rep, err := c.do(ctx, request{method: http.MethodGet, path: path, query: q})
	if err != nil {
		return err
	}
	return decodeReply(http.MethodGet, path, rep, v)
}

// sendJSON sends body as JSON and decodes the answer into v (when v is not nil).
func (c *Client) sendJSON(ctx context.Context, method, path string, body, v any) error {
	b, err := marshalJSON(body)
	if err != nil {
		return err
	}
	rep, err := c.do(ctx, request{method: method, path: path, body: b, contentType: "application/json"})
	if err != nil {
		return err
	}
	if v == nil {
		return nil
	}
	return decodeReply(method, path, rep, v)
}

func decodeReply(method, path string, rep reply, v any) error {
	if err := json.Unmarshal(rep.body, v); err != nil {
		return fmt.Errorf("%s %s: %w: %v", method, path, ErrMalformedReply, err)
	}
	return nil
}

// marshalJSON encodes v without HTML escaping, so raw JSON values (payloads,
// schemas) keep their bytes.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("httpclient: encode request: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// topicPath is /v1/topics/<escaped name><suffix>.
func topicPath(topic, suffix string) string {
	return "/v1/topics/" + url.PathEscape(topic) + suffix
}
