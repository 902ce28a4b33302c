package remotehttp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// readAnswer keeps the first ports.RemoteAnswerBodyMaxBytes of the body,
// drains a bounded rest so the connection can be reused, and closes it.
func readAnswer(resp *http.Response) (ports.RemoteAnswer, error) {
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, ports.RemoteAnswerBodyMaxBytes))
	if err != nil {
		return ports.RemoteAnswer{}, err
	}
	// A longer rest is left unread: Close then drops the connection.
	_, _ = io.CopyN(io.Discard, resp.Body, answerDrainMaxBytes)
	return ports.RemoteAnswer{
		Status:     resp.StatusCode,
		RetryAfter: retryAfter(resp.Header),
		Body:       body,
	}, nil
}

// retryAfter reads a Retry-After header in whole seconds; an HTTP date or
// anything else is 0.
func retryAfter(h http.Header) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After")))
	if err != nil || n < 0 {
		return 0
	}
	return time.Duration(min(n, retryAfterMaxSeconds)) * time.Second
}

// connTrace records, for one request, whether it opened a new connection,
// how long getting it took, and whether a TLS handshake failed. Its hooks
// may run on the dialing goroutine.
type connTrace struct {
	mu          sync.Mutex
	getAt       time.Time
	connectTime time.Duration
	newConn     bool
	tlsFailed   bool
}

func (t *connTrace) hooks() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GetConn: func(string) {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.getAt = time.Now()
		},
		GotConn: func(info httptrace.GotConnInfo) {
			t.mu.Lock()
			defer t.mu.Unlock()
			if !info.Reused {
				t.newConn = true
				t.connectTime = time.Since(t.getAt)
			}
		},
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			t.mu.Lock()
			defer t.mu.Unlock()
			if err != nil {
				t.tlsFailed = true
			}
		},
	}
}

// fill sets ConnectTime (resolve, connect and handshake) and the leaf
// certificate's NotAfter when the request opened a new connection.
func (t *connTrace) fill(a *ports.RemoteAnswer, resp *http.Response) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.newConn {
		return
	}
	a.ConnectTime = t.connectTime
	if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		a.CertNotAfter = resp.TLS.PeerCertificates[0].NotAfter
	}
}

func (t *connTrace) handshakeFailed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tlsFailed
}

// classify maps a failed request to the outcomes of ports.RemoteClient:
// the caller's own ctx error as is, a guard refusal, a TLS failure, or
// "unavailable" for everything else (timeout, refused or reset
// connection, DNS failure, EOF before an answer). The messages carry
// neither the Authorization header nor the body.
func (c *client) classify(ctx, reqCtx context.Context, err error, trace *connTrace) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	var refused *RefusedError
	if errors.As(err, &refused) {
		return refused
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err // its message repeats the URL
	}
	switch {
	case isTLSFailure(err):
		return fmt.Errorf("%w: %w", domain.ErrRemoteTLS, err)
	case reqCtx.Err() != nil || isTimeout(err):
		return fmt.Errorf("%w: no answer within %s", domain.ErrRemoteUnavailable, c.timeout)
	case trace.handshakeFailed():
		return fmt.Errorf("%w: %w", domain.ErrRemoteTLS, err)
	}
	return fmt.Errorf("%w: %w", domain.ErrRemoteUnavailable, err)
}

// isTLSFailure reports a handshake or verification failure.
func isTLSFailure(err error) bool {
	var (
		header    tls.RecordHeaderError
		alert     tls.AlertError
		verify    *tls.CertificateVerificationError
		authority x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		roots     x509.SystemRootsError
		op        *net.OpError
	)
	switch {
	case errors.As(err, &header), errors.As(err, &alert), errors.As(err, &verify),
		errors.As(err, &authority), errors.As(err, &hostname), errors.As(err, &invalid),
		errors.As(err, &roots):
		return true
	}
	// An alert the remote sent arrives as a net.OpError "remote error".
	return errors.As(err, &op) && op.Op == "remote error"
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
