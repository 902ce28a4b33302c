package httpapi

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/narad/narad/domain"
)

// outcome is how one domain error reaches the client.
type outcome struct {
	err    error
	status int
	msg    string // the error body's message; "" = the Refusal's detail, else the sentinel's text
}

// errorTable is the one place domain errors become status codes (style
// rule 7). The messages listed in api.md appendix B are matched by substring
// by the narad-go SDK: keep them.
var errorTable = []outcome{
	{domain.ErrInvalidTopicName, http.StatusBadRequest, ""},
	{domain.ErrInvalidRecord, http.StatusBadRequest, ""},
	{domain.ErrInvalidArgument, http.StatusBadRequest, ""},
	{domain.ErrEmptyMessage, http.StatusBadRequest, "message required"},
	{domain.ErrPartitionOutOfRange, http.StatusBadRequest, "invalid argument: partition out of range"},
	{domain.ErrInvalidReceiptHandle, http.StatusBadRequest, "receipt handle is malformed"},
	{domain.ErrOffsetNegative, http.StatusBadRequest, "invalid offset: must be >= 0"},
	{domain.ErrTopicNotFound, http.StatusNotFound, "topic not found"},
	{domain.ErrNoRedrive, http.StatusNotFound, "no redrive job on this topic"},
	{domain.ErrTopicExists, http.StatusConflict, "topic already exists"},
	{domain.ErrTopicNameCase, http.StatusConflict, ""},
	{domain.ErrTopicChanged, http.StatusConflict, "topic changed since it was read"},
	{domain.ErrDelayedChildProduce, http.StatusConflict, "direct produce to a delayed child topic is not allowed"},
	{domain.ErrConflict, http.StatusConflict, ""},
	{domain.ErrOffsetGone, http.StatusGone, ""},
	{domain.ErrRecordCorrupt, http.StatusGone, ""},
	{domain.ErrLeaseGone, http.StatusGone, "receipt handle no longer matches an active reservation"},
	{domain.ErrRecordTooLarge, http.StatusRequestEntityTooLarge, "request body too large"},
	{domain.ErrNotOwner, http.StatusMisdirectedRequest, "this node does not own the requested partition"},
	{domain.ErrWALFailed, http.StatusInternalServerError, "produce failed"},
	{domain.ErrOwnerDown, http.StatusServiceUnavailable, "partition owner is down; retry later"},
	{domain.ErrOwnerNoAnswer, http.StatusBadGateway, ""},
	{domain.ErrOwnerNotReached, http.StatusServiceUnavailable, ""},
	{domain.ErrUnavailable, http.StatusServiceUnavailable, ""},
	{domain.ErrLogClosed, http.StatusServiceUnavailable, "partition log is closing; retry"},
	{domain.ErrClosed, http.StatusServiceUnavailable, "node is shutting down; retry"},
	{domain.ErrTooManyConsumes, http.StatusTooManyRequests, ""},
	{domain.ErrNotImplemented, http.StatusNotImplemented, ""},
	{domain.ErrForbidden, http.StatusForbidden, ""},
	{domain.ErrUnauthenticated, http.StatusUnauthorized, msgAuthRequired},
	{domain.ErrAuthThrottled, http.StatusTooManyRequests, "too many failed authentication attempts"},
	{domain.ErrAuthUnavailable, http.StatusInternalServerError, "authentication unavailable"},
	{domain.ErrUserNotFound, http.StatusNotFound, "not found"},
	{domain.ErrUserExists, http.StatusConflict, "already exists"},
	{domain.ErrMemberNotFound, http.StatusNotFound, "not found"},
	{domain.ErrNoAssignment, http.StatusNotFound, ""},
	{domain.ErrNoMove, http.StatusConflict, ""},
	{domain.ErrDraining, http.StatusServiceUnavailable, msgDraining},
	{domain.ErrRemoteNotFound, http.StatusNotFound, "remote not found"},
	{domain.ErrPrecondition, http.StatusPreconditionFailed, ""},
	{domain.ErrRateLimited, http.StatusTooManyRequests, ""},
	{errBodyTimeout, http.StatusRequestTimeout, msgBodyTimeout},
}

// msgDraining is the 503 of a client produce on a draining node (api.md
// §2.13); the answer carries Retry-After: 1 (writeError). Word for word:
// the Go SDK matches "being decommissioned and takes no new produce" to
// know nothing was stored and resend elsewhere (api.md Appendix B.2).
const msgDraining = "this node is being decommissioned and takes no new produce; send it to another node"

// retryAfterDraining is the Retry-After of a draining node's 503.
const retryAfterDraining = "1"

// msgBodyTimeout is the 408 message of every route that reads a body. It
// names no socket address: the cause stays in the wrapped error.
const msgBodyTimeout = "request body not received within the read timeout"

// errBodyTimeout marks a request body cut off by the server's read deadline
// (http.read_timeout bounds the whole request, api.md §0.2): the client's
// retryable problem, not malformed input, so a 408 and never a 400 or 500.
var errBodyTimeout = errors.New("httpapi: request body not received within the read timeout")

// bodyReadError is the answer to a failed read of a request body: past the
// read deadline, errBodyTimeout wrapping the cause (408); any other
// transport error, 400 "<prefix>: <err>".
func bodyReadError(err error, prefix string) error {
	if isTimeout(err) {
		return fmt.Errorf("%w: %w", errBodyTimeout, err)
	}
	return clientErr(http.StatusBadRequest, "%s: %v", prefix, err)
}

// isTimeout reports whether err is a deadline passing, not a broken body.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// statusOf maps err to its status and message. A clientError carries its own;
// an error the table does not know is a 500 with a generic message (the
// caller logs the detail, the client never sees internals).
func statusOf(err error) (int, string) {
	var ce *clientError
	if errors.As(err, &ce) {
		return ce.status, ce.msg
	}
	for _, o := range errorTable {
		if !errors.Is(err, o.err) {
			continue
		}
		if o.msg != "" {
			return o.status, o.msg
		}
		var r *domain.Refusal
		if errors.As(err, &r) {
			return o.status, r.Detail
		}
		return o.status, strings.TrimPrefix(o.err.Error(), "domain: ")
	}
	return http.StatusInternalServerError, "internal error"
}
