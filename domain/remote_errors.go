package domain

import "errors"

// Remote replication outcomes (internals.md §7). The HTTP adapter maps them.
var (
	// ErrRemoteSecret: the cluster secret is missing, or fails the strength
	// rule of internals.md §7.6, so this node cannot seal or open (412).
	ErrRemoteSecret = errors.New("domain: cluster secret unusable for remote credentials")
	// ErrRemoteKeyUnknown: a sealed password names a key version this node
	// can derive from neither the current nor the previous secret.
	ErrRemoteKeyUnknown = errors.New("domain: remote credential sealed under an unknown key")
	// ErrRemoteSealBroken: a sealed password does not open: tampered, or the
	// remote's name, id, URL, username or CA changed since it was sealed.
	ErrRemoteSealBroken = errors.New("domain: remote credential does not open")
	// ErrRemoteURL: a remote URL outside https://host[:port][/path], or a
	// host that does not canonicalize (400).
	ErrRemoteURL = errors.New("domain: invalid remote url")
	// ErrDestinationRefused: the address guard, the allowed ports or the
	// allowed hosts refused a destination (400 at create; the link state
	// destination_refused while sending).
	ErrDestinationRefused = errors.New("domain: remote destination refused")
	// ErrRemoteTLS: the TLS handshake with a remote failed (tls_failed).
	ErrRemoteTLS = errors.New("domain: remote tls failed")
	// ErrRemoteUnavailable: no answer from a remote: a timeout, a refused
	// or reset connection, a DNS failure (unavailable).
	ErrRemoteUnavailable = errors.New("domain: remote unavailable")
)

// Refusals of the remotes API (api.md §2.18).
var (
	// ErrRemoteNotFound: no remote of that name (404 "remote not found").
	ErrRemoteNotFound = errors.New("domain: remote not found")
	// ErrPrecondition: a precondition of the node or the cluster is not met;
	// its Refusal says which (412).
	ErrPrecondition = errors.New("domain: precondition failed")
	// ErrRateLimited: too many requests of a kind; retry after the
	// RetryLater's seconds (429).
	ErrRateLimited = errors.New("domain: rate limited")
)

// RetryLater is a refusal the client may repeat after Seconds: the HTTP
// adapter sends them as Retry-After.
type RetryLater struct {
	Refusal
	Seconds int
}

// RefuseLater returns a *RetryLater of sentinel err with the client's
// message and the seconds to wait (at least 1).
func RefuseLater(err error, detail string, seconds int) error {
	return &RetryLater{Refusal: Refusal{Err: err, Detail: detail}, Seconds: max(seconds, 1)}
}

func (r *RetryLater) Unwrap() error { return &r.Refusal }
