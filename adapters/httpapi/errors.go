package httpapi

import (
	"errors"
	"net/http"

	"github.com/narad/narad/domain"
)

// outcome is how one domain error reaches the client.
type outcome struct {
	err    error
	status int
	msg    string // the error body's message; the SDK matches some by substring
}

// errorTable is the one place domain errors become status codes (style
// rule 7). Order matters only where one error wraps another.
var errorTable = []outcome{
	{domain.ErrInvalidTopicName, http.StatusBadRequest, ""},
	{domain.ErrInvalidRecord, http.StatusBadRequest, ""},
	{domain.ErrInvalidReceiptHandle, http.StatusBadRequest, "receipt handle is malformed"},
	{domain.ErrRecordTooLarge, http.StatusRequestEntityTooLarge, "request body too large"},
	{domain.ErrOffsetNegative, http.StatusBadRequest, "invalid offset: must be >= 0"},
	{domain.ErrOffsetGone, http.StatusGone, ""},
	{domain.ErrRecordCorrupt, http.StatusGone, ""},
	{domain.ErrLeaseGone, http.StatusGone, "receipt handle no longer matches an active reservation"},
	{domain.ErrWALFailed, http.StatusInternalServerError, "produce failed"},
	{domain.ErrLogClosed, http.StatusServiceUnavailable, "partition log is closing; retry"},
	{domain.ErrClosed, http.StatusServiceUnavailable, "node is shutting down; retry"},
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
		if errors.Is(err, o.err) {
			if o.msg == "" {
				return o.status, err.Error()
			}
			return o.status, o.msg
		}
	}
	return http.StatusInternalServerError, "internal error"
}
