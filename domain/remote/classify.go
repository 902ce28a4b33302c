package remote

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// TransportErr is why a request got no HTTP answer.
type TransportErr uint8

// The transport failures the classifier tells apart.
const (
	TransportNone               TransportErr = iota // an HTTP answer came
	TransportDestinationRefused                     // the address guard, port or host list refused the dial
	TransportTLSFailed                              // the TLS handshake failed
	TransportUnavailable                            // timeout, refused or reset connection, DNS failure
)

func (e TransportErr) String() string {
	switch e {
	case TransportNone:
		return "none"
	case TransportDestinationRefused:
		return "destination_refused"
	case TransportTLSFailed:
		return "tls_failed"
	case TransportUnavailable:
		return "unavailable"
	}
	return "invalid"
}

// Answer is what one request to the target got: an HTTP status and the
// start of the body, or a transport failure. RetryAfter is the answer's
// Retry-After header, 0 when absent.
type Answer struct {
	Status     int
	Body       []byte
	Err        TransportErr
	RetryAfter time.Duration
}

// Action is what the sender does about an answer (internals.md §7.3).
type Action uint8

// The actions, in the order of the rows of internals.md §7.3.
const (
	// Committed: the chunk is stored; send the next one.
	Committed Action = iota + 1
	// ResendBeforeIndex: the target refused message Index. Re-send the
	// records before it alone, retry it once as base64 if it went raw, then
	// block the lane on it.
	ResendBeforeIndex
	// Bisect: the target refused some record of the chunk without naming
	// it; halve the chunk down to one record to find it, then block on it.
	Bisect
	// BlockRecheck: the target became a delay child or a stub; block on the
	// chunk's first record and re-check the target.
	BlockRecheck
	// Halve: the body was too large; halve the chunk (and shrink the lane's
	// ByteCap); a single record that still gets it blocks the lane.
	Halve
	// GateClose: a remote-wide failure; report it to the Gate, which closes
	// (RetryAfter, when set, is the wait; else the gate's backoff).
	GateClose
	// Stall: stall the cursor; retry after StallRetryWait, at once when the
	// remote changes, after a check.
	Stall
	// ProbeListing: a bare 404 from the batch route; read the target's
	// children listing: if it answers the target lacks batch produce
	// (stall as no_batch_produce), otherwise an edge answered (unavailable).
	ProbeListing
	// RetryLane: retry after the lane backoff (and report it to the Gate);
	// the request may have landed, so its records count as resent.
	RetryLane
	// ResendUncompressed: the target did not take the compressed chunk;
	// resend it uncompressed at once and stop compressing until the next
	// check.
	ResendUncompressed
	actionEnd
)

var actionNames = [actionEnd]string{
	"", "committed", "resend_before_index", "bisect", "block_recheck", "halve",
	"gate_close", "stall", "probe_listing", "retry_lane", "resend_uncompressed",
}

func (a Action) String() string {
	if a < Committed || a >= actionEnd {
		return "invalid"
	}
	return actionNames[a]
}

// Verdict is the classifier's reading of an answer: the action, the link
// state it puts the lane in, the refused message's index inside the
// request (-1 when the answer names none) and the wait the answer asks for
// (0 = the caller's own backoff).
type Verdict struct {
	State      State
	Action     Action
	Index      int
	RetryAfter time.Duration
}

// Within checks the verdict against the n messages the request carried: a
// named index outside the request (a target bug) is read as an answer
// without index, so the chunk is bisected.
func (v Verdict) Within(n int) Verdict {
	if v.Index >= n {
		v.Index = -1
		if v.Action == ResendBeforeIndex {
			v.Action = Bisect
		}
	}
	return v
}

// The error texts the classifier reads (api.md §2.13.1).
const (
	messagePrefix     = "message "
	invalidJSONPrefix = "invalid json"
)

// Classify reads a target's answer to one chunk (internals.md §7.3).
// sentCompressed says the body went with Content-Encoding: zstd. Only the
// status, the derived state and a refused record's index come out of it:
// the body stays opaque.
//
// Statuses whose meaning does not depend on who answered (3xx, 401, 403,
// 408, 409, 413, 429, 5xx) are read from the status alone. A 400 or another
// 4xx refuses records only when its body is Narad-shaped; from anything
// else (a proxy's page) it is an edge answering, so unavailable. A 404 is
// target_missing when Narad-shaped and a bare 404 otherwise. Index is set
// for a Narad-shaped 4xx whose error starts "message N: ".
func Classify(a Answer, sentCompressed bool) Verdict {
	if a.Err != TransportNone {
		return classifyTransport(a.Err)
	}
	s := a.Status
	msg, narad := NaradError(a.Body)
	switch {
	case s == statusAccepted:
		return verdict(Running, Committed)
	case s >= 300 && s < 400:
		return verdict(RedirectRefused, Stall)
	case s == statusUnauthorized:
		return waiting(AuthFailed, GateClose, GateAuthFailedWait)
	case s == statusForbidden:
		return waiting(Forbidden, Stall, StallRetryWait)
	case s == statusTooManyRequests:
		return waiting(Throttled, GateClose, min(max(a.RetryAfter, 0), GateRetryAfterMax))
	case s == statusNotFound && narad:
		return verdict(TargetMissing, Stall)
	case s == statusNotFound:
		return verdict(NoBatchProduce, ProbeListing)
	case s == statusRequestTimeout:
		return verdict(Unavailable, RetryLane)
	case s == statusUnsupportedMedia && sentCompressed,
		s == statusBadRequest && sentCompressed && narad && strings.HasPrefix(msg, invalidJSONPrefix):
		return verdict(Running, ResendUncompressed)
	case s == statusConflict, s == statusTooLarge, s >= 400 && s < 500 && narad:
		return refused(s, msg)
	}
	// 5xx, and any other answer (a non-Narad 4xx, an unexpected 1xx or
	// 2xx): an edge or a failing target answered.
	return verdict(Unavailable, RetryLane)
}

// refused reads a 4xx that refuses the chunk's records; msg is the error
// text of a Narad-shaped body, "" otherwise.
func refused(status int, msg string) Verdict {
	v := verdict(RejectedRecord, Bisect)
	v.Index = messageIndex(msg)
	switch {
	case status == statusConflict:
		v.Action = BlockRecheck
	case status == statusTooLarge:
		v.State, v.Action = RecordTooLarge, Halve
	case status == statusBadRequest && v.Index >= 0:
		v.Action = ResendBeforeIndex
	}
	return v
}

// classifyTransport reads a request that got no HTTP answer.
func classifyTransport(e TransportErr) Verdict {
	switch e {
	case TransportDestinationRefused:
		return verdict(DestinationRefused, Stall)
	case TransportTLSFailed:
		return verdict(TLSFailed, GateClose)
	}
	return verdict(Unavailable, RetryLane)
}

func verdict(s State, a Action) Verdict { return Verdict{State: s, Action: a, Index: -1} }

func waiting(s State, a Action, wait time.Duration) Verdict {
	v := verdict(s, a)
	v.RetryAfter = wait
	return v
}

// IsNarad reports whether body is a Narad-shaped error answer.
func IsNarad(body []byte) bool {
	_, ok := NaradError(body)
	return ok
}

// NaradError reads a Narad-shaped answer body: a JSON object whose "error"
// field is a string (a trailing newline is fine). narad is false for
// anything else: an HTML page, an empty body, another JSON shape.
func NaradError(body []byte) (msg string, narad bool) {
	var shape struct {
		Error *string `json:"error"`
	}
	if len(body) == 0 || json.Unmarshal(body, &shape) != nil || shape.Error == nil {
		return "", false
	}
	return *shape.Error, true
}

// messageIndex is N of an error text starting "message N: " (api.md §2.13.1:
// the first failing message, zero-based), or -1 when the text does not
// start so or N does not fit an int.
func messageIndex(msg string) int {
	rest, ok := strings.CutPrefix(msg, messagePrefix)
	if !ok {
		return -1
	}
	digits := 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	if digits == 0 || !strings.HasPrefix(rest[digits:], ": ") {
		return -1
	}
	n, err := strconv.Atoi(rest[:digits])
	if err != nil {
		return -1
	}
	return n
}
