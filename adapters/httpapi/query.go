package httpapi

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain/deadletter"
)

// query is a raw query string whose names all unescape, read without
// copying: a lookup walks it again (queries hold a handful of
// parameters), and values stay escaped until asked for, so that a bad
// escape is reported against the parameter that holds it.
type query string

// parseQuery checks that every name of raw (split on '&' and '=')
// unescapes with form rules.
func parseQuery(raw string) (query, error) {
	for rest := raw; rest != ""; {
		var pair string
		pair, rest, _ = strings.Cut(rest, "&")
		name, _, _ := strings.Cut(pair, "=")
		if _, err := url.QueryUnescape(name); err != nil {
			return "", clientErr(400, "invalid query parameter: %v", err)
		}
	}
	return query(raw), nil
}

// lookup returns the first still-escaped value of name and how many times
// name occurs.
func (q query) lookup(name string) (first string, n int) {
	for rest := string(q); rest != ""; {
		var pair string
		pair, rest, _ = strings.Cut(rest, "&")
		if pair == "" {
			continue
		}
		raw, value, _ := strings.Cut(pair, "=")
		if got, _ := url.QueryUnescape(raw); got != name { // checked by parseQuery
			continue
		}
		if n == 0 {
			first = value
		}
		n++
	}
	return first, n
}

// has reports whether name occurs.
func (q query) has(name string) bool {
	_, n := q.lookup(name)
	return n > 0
}

// first returns the first occurrence of name, unescaped with form rules
// (%XX escapes, '+' = space).
func (q query) first(name string) (string, bool, error) {
	raw, n := q.lookup(name)
	if n == 0 {
		return "", false, nil
	}
	v, err := url.QueryUnescape(raw)
	if err != nil {
		return "", true, clientErr(400, "invalid %s: %v", name, err)
	}
	return v, true, nil
}

// only is first, refusing a repeated parameter.
func (q query) only(name string) (string, bool, error) {
	if _, n := q.lookup(name); n > 1 {
		return "", true, clientErr(400, "duplicate %s query parameter", name)
	}
	return q.first(name)
}

// produceParams are a single produce's query parameters (api.md §2.13).
type produceParams struct {
	key          []byte
	partition    int32
	hasPartition bool
	schedule     produceSchedule
}

func parseProduceQuery(raw string) (produceParams, error) {
	var p produceParams
	q, err := parseQuery(raw)
	if err != nil {
		return p, err
	}
	key, _, err := q.only("key")
	if err != nil {
		return p, err
	}
	p.key = []byte(key)
	if p.schedule, err = scheduleQuery(q); err != nil {
		return p, err
	}
	part, ok, err := q.only("partition")
	if err != nil || !ok {
		return p, err
	}
	p.partition, err = parsePartition(part, true)
	p.hasPartition = err == nil
	return p, err
}

// parsePartition parses a partition index; emptyMsg asks for the produce
// route's distinct "empty" message.
func parsePartition(s string, emptyMsg bool) (int32, error) {
	if s == "" && emptyMsg {
		return 0, clientErr(400, "invalid partition: empty")
	}
	n, err := strconv.ParseInt(s, 10, 32)
	switch {
	case err != nil:
		return 0, clientErr(400, "invalid partition: %v", err)
	case n < 0:
		return 0, clientErr(400, "invalid partition: must be >= 0")
	}
	return int32(n), nil
}

// consumeMode is how a consume request reads (api.md §2.14).
type consumeMode int

const (
	modeQueue consumeMode = iota
	modePinned
	modeBatch
	modeReplay
)

// consumeParams are a consume's query parameters.
type consumeParams struct {
	mode         consumeMode
	partition    int32
	hasPartition bool
	offset       int64
	max          int
	wait         time.Duration
	localOnly    bool
}

// parseConsumeQuery parses a consume's query; hasClientHeader says whether
// X-Narad-Client was sent (batch consume requires it).
func parseConsumeQuery(raw string, hasClientHeader bool) (consumeParams, error) {
	var p consumeParams
	q, err := parseQuery(raw)
	if err != nil {
		return p, err
	}
	if v, ok, err := q.first("partition"); err != nil {
		return p, err
	} else if ok {
		if p.partition, err = parsePartition(v, false); err != nil {
			return p, err
		}
		p.hasPartition = true
	}
	offset, hasOffset, err := parseOffset(q)
	if err != nil {
		return p, err
	}
	max, hasMax, err := parseMax(q, hasOffset, hasClientHeader)
	if err != nil {
		return p, err
	}
	if p.wait, err = parseWait(q); err != nil {
		return p, err
	}
	v, _, err := q.first("local_only")
	if err != nil {
		return p, err
	}
	p.localOnly = v == "1"
	p.offset, p.max = offset, max
	switch {
	case hasOffset:
		p.mode = modeReplay
	case hasMax:
		p.mode = modeBatch
	case p.hasPartition:
		p.mode = modePinned
	}
	return p, nil
}

func parseOffset(q query) (int64, bool, error) {
	v, ok, err := q.first("offset")
	if err != nil || !ok {
		return 0, false, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err != nil:
		return 0, true, clientErr(400, "invalid offset: %v", err)
	case n < 0:
		return 0, true, clientErr(400, "invalid offset: must be >= 0")
	}
	if !q.has("partition") {
		return 0, true, clientErr(400, "partition required for replay-mode consume")
	}
	return n, true, nil
}

func parseMax(q query, hasOffset, hasClientHeader bool) (int, bool, error) {
	v, ok, err := q.first("max")
	if err != nil || !ok {
		return 0, false, err
	}
	n, err := strconv.Atoi(v)
	switch {
	case err != nil || n < 1 || n > consume.BatchMaxMessages:
		return 0, true, clientErr(400, "invalid max: want an integer from 1 to %d", consume.BatchMaxMessages)
	case hasOffset:
		return 0, true, clientErr(400, "max cannot be combined with offset: replay reads one record")
	case !hasClientHeader:
		return 0, true, clientErr(400, "batch consume (max) requires an X-Narad-Client header")
	}
	return n, true, nil
}

// parseWait parses the long-poll budget: a Go duration (a bare integer other
// than 0 is invalid), negative meaning 0. Clamping is the caller's.
func parseWait(q query) (time.Duration, error) {
	v, ok, err := q.first("wait")
	if err != nil || !ok || v == "" {
		return 0, err
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, clientErr(400, "invalid wait: %v", err)
	}
	return max(d, 0), nil
}

// ackOp is what an ack request does to its leases (api.md §2.15).
type ackOp int

const (
	opAck ackOp = iota
	opExtend
	opNack
)

// parseExtend reads the extend parameter: absent, empty or false = ack;
// true or 1 = extend; 0 = nack; first occurrence wins.
func parseExtend(q query) (ackOp, error) {
	v, _, err := q.first("extend")
	if err != nil {
		return opAck, err
	}
	switch v {
	case "", "false":
		return opAck, nil
	case "true", "1":
		return opExtend, nil
	case "0":
		return opNack, nil
	}
	return opAck, clientErr(400, `invalid extend: want "true" (renew lease) or "0" (release for redelivery)`)
}

// parseNackDelay reads delay_ms (api-extensions.md "Nack with a delay or a
// reason"):
// absent = 0; a nack (extend=0) only; an integer from 0 to
// consume.NackDelayMax in milliseconds; once.
func parseNackDelay(q query, op ackOp) (time.Duration, error) {
	v, ok, err := q.only("delay_ms")
	if err != nil || !ok {
		return 0, err
	}
	maxMs := consume.NackDelayMax.Milliseconds()
	ms, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err != nil || ms < 0 || ms > maxMs:
		return 0, clientErr(400, "invalid delay_ms: want an integer from 0 to %d (milliseconds)", maxMs)
	case op != opNack:
		return 0, clientErr(400, "delay_ms applies to a nack only (extend=0)")
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// parseNackReason reads reason (api-extensions.md "Nack with a delay or a
// reason"): absent = ""; a nack (extend=0) only; 1 to
// deadletter.ReasonBytesMax bytes of UTF-8 once unescaped; once.
func parseNackReason(q query, op ackOp) (string, error) {
	v, ok, err := q.only("reason")
	if err != nil || !ok {
		return "", err
	}
	switch {
	case v == "" || len(v) > deadletter.ReasonBytesMax || !utf8.ValidString(v):
		return "", clientErr(400, "invalid reason: want 1 to %d bytes of UTF-8", deadletter.ReasonBytesMax)
	case op != opNack:
		return "", clientErr(400, "reason applies to a nack only (extend=0)")
	}
	return v, nil
}

// clientError is a refusal of the request as sent: its status and message
// go to the client as they are.
type clientError struct {
	status int
	msg    string
}

func (e *clientError) Error() string { return e.msg }

func clientErr(status int, format string, args ...any) error {
	return &clientError{status: status, msg: fmt.Sprintf(format, args...)}
}
