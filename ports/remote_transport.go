package ports

import (
	"context"
	"time"

	"github.com/narad/narad/domain/meta"
)

// RemoteEndpoint is everything a client of one remote needs: the canonical
// URL, the ready Authorization header (built from the opened password; the
// send path does no cryptography), the CA bundle ("" = system roots) and
// the limits.
type RemoteEndpoint struct {
	// Name is the remote's name: it labels what the transport counts.
	Name          string
	URL           string
	Authorization string
	CAPEM         string
	Limits        meta.RemoteLimits
}

// RemoteRequest is one request to a remote. Path is appended to the URL's
// path ("/v1/topics/orders/produce/batch"); Anonymous leaves the
// Authorization header off (the target check that security is on).
type RemoteRequest struct {
	Method          string
	Path            string
	Body            []byte
	ContentEncoding string // "" or "zstd": Body is already encoded so
	Anonymous       bool
	// Compress asks the transport to send Body zstd-compressed when that
	// saves at least 10 % (internals.md §7.2 "Compression");
	// RemoteAnswer.Compressed says whether it did.
	Compress bool
}

// RemoteAnswer is what a remote answered. Body holds at most the first
// RemoteAnswerBodyMaxBytes of the answer: enough to classify it, never
// shown to anyone. ConnectTime and CertNotAfter are set when the request
// opened a new connection.
type RemoteAnswer struct {
	Status       int
	RetryAfter   time.Duration // from a Retry-After header in seconds; 0 when absent
	Body         []byte
	ConnectTime  time.Duration
	CertNotAfter time.Time
	// Compressed says the request body went zstd-compressed; WireBytes
	// is its size as sent.
	Compressed bool
	WireBytes  int
}

// RemoteAnswerBodyMaxBytes bounds the answer body a client keeps.
const RemoteAnswerBodyMaxBytes = 64 << 10

// RemoteClient sends requests to one remote over its own connection pool.
// Safe for concurrent use.
type RemoteClient interface {
	// Do sends req within the remote's request timeout and ctx. A 3xx is an
	// answer like any other (redirects are never followed). Errors wrap
	// domain.ErrDestinationRefused (the address guard refused the resolved
	// address, the port or the host), domain.ErrRemoteTLS,
	// domain.ErrRemoteUnavailable (timeout, refused or reset connection,
	// DNS failure), or are ctx.Err().
	Do(ctx context.Context, req RemoteRequest) (RemoteAnswer, error)
	// Close closes the idle connections; requests in flight finish.
	Close()
}

// RemoteTransport is the outbound transport to remotes (internals.md §7.7):
// https only, the address guard on every dial, no proxy, no redirect.
type RemoteTransport interface {
	// CheckURL checks raw against the URL rule, the node's allowed ports
	// and allowed hosts, resolves the host and runs the address guard on
	// every address it resolves to. It returns the canonical URL. Errors
	// wrap domain.ErrRemoteURL or domain.ErrDestinationRefused with a
	// message fit for the caller.
	CheckURL(ctx context.Context, raw string) (string, error)
	// NewClient builds a client for ep. Errors wrap domain.ErrRemoteURL
	// (an unusable URL or CA bundle).
	NewClient(ep RemoteEndpoint) (RemoteClient, error)
	// AllowlistSet reports whether remotes.allowed_hosts is set.
	AllowlistSet() bool
}
