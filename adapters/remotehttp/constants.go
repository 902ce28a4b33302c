package remotehttp

import "time"

// Bounds of the URL rule and the outbound client (internals.md §7.7).
const (
	// urlMaxBytes bounds a remote URL, raw and canonical.
	urlMaxBytes = 2048
	// hostMaxBytes bounds a DNS name (without the trailing dot).
	hostMaxBytes = 253
	// labelMaxBytes bounds one DNS label.
	labelMaxBytes = 63
	// defaultPortNumber is the https port the canonical form leaves out.
	defaultPortNumber = 443
	// portMaxNumber is the highest TCP port.
	portMaxNumber = 65535

	// caBundleMaxBytes bounds a remote's CA bundle (api.md §2.18, `ca_pem`).
	caBundleMaxBytes = 64 << 10
	// caCertsMaxCount is the most certificates a CA bundle may hold.
	caCertsMaxCount = 16

	// extraConnsCount is the connections a remote gets beyond its
	// max_in_flight record-request slots: target checks, listings and
	// capability probes (internals.md §7.2).
	extraConnsCount = 4
	// defaultMaxInFlight, defaultRequestTimeout, defaultIdleConnTimeout and
	// defaultConnMaxAge stand in for a zero limit (the defaults of
	// internals.md §7.1); NewClient does not re-validate limit bounds.
	defaultMaxInFlight     = 16
	defaultRequestTimeout  = 30 * time.Second
	defaultIdleConnTimeout = 30 * time.Second
	defaultConnMaxAge      = 300 * time.Second

	// answerDrainMaxBytes is how much of an answer past the kept part is
	// read and discarded so the connection can be reused; a longer answer
	// closes its connection instead.
	answerDrainMaxBytes = 256 << 10
	// responseHeaderMaxBytes bounds an answer's header block.
	responseHeaderMaxBytes = 64 << 10
	// retryAfterMaxSeconds caps a Retry-After header (the caller honours
	// at most 60 s anyway).
	retryAfterMaxSeconds = 24 * 60 * 60

	// userAgent names this transport to the remote.
	userAgent = "narad-remote"
)
