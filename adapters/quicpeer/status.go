package quicpeer

import (
	"errors"
	"fmt"

	"github.com/narad/narad/domain"
)

// Reply of every operation of this package (internals.md §10.3):
//
//	status u16 (HTTP vocabulary) | code string | detail string | body bytes
//
// A success carries its body; a refusal carries the code naming the domain
// sentinel and, when the owner's error was a *domain.Refusal, its
// client-facing detail, so the caller rebuilds the very error the owner's
// use case returned. Transport trouble never becomes a status: it stays a
// transport error, and a caller can tell "the owner refused" from "the
// outcome is unknown".

// Reply statuses.
const (
	statusOK          uint16 = 200
	statusNoContent   uint16 = 204
	statusBadRequest  uint16 = 400
	statusInternal    uint16 = 500
	statusUnavailable uint16 = 503
)

// refusal is how one domain sentinel crosses the wire. Codes are part of
// the wire format and must never change meaning.
type refusal struct {
	err    error
	status uint16
	code   string
}

// refusalTable is the one mapping of domain sentinels to reply statuses and
// codes in this package. Order matters: the first sentinel err matches wins.
var refusalTable = []refusal{
	{domain.ErrTopicNotFound, 404, "topic_not_found"},
	{domain.ErrNotOwner, 421, "not_owner"},
	{domain.ErrNotMetaLeader, 421, codeNotLeader},
	{domain.ErrNoCluster, 412, "no_cluster"},
	{domain.ErrJoinTombstoned, 409, "tombstoned"},
	{domain.ErrOlderRelease, 409, "older_release"},
	{domain.ErrOwnerDown, 503, "owner_down"},
	{domain.ErrUnavailable, 503, "unavailable"},
	{domain.ErrLogClosed, 503, "log_closed"},
	{domain.ErrClosed, 503, "closed"},
	{domain.ErrLeaseGone, 410, "lease_gone"},
	{domain.ErrOffsetGone, 410, "offset_gone"},
	{domain.ErrRecordCorrupt, 410, "record_corrupt"},
	{domain.ErrOffsetNotWritten, 204, "offset_not_written"},
	{domain.ErrTooManyConsumes, 429, "too_many_consumes"},
	{domain.ErrPartitionOutOfRange, 400, "partition_out_of_range"},
	{domain.ErrInvalidReceiptHandle, 400, "invalid_receipt_handle"},
	{domain.ErrOffsetNegative, 400, "offset_negative"},
	{domain.ErrInvalidRecord, 400, "invalid_record"},
	{domain.ErrInvalidTopicName, 400, "invalid_topic_name"},
	{domain.ErrEmptyMessage, 400, "empty_message"},
	{domain.ErrInvalidArgument, 400, "invalid_argument"},
	{domain.ErrRecordTooLarge, 413, "record_too_large"},
	{domain.ErrTopicExists, 409, "topic_exists"},
	{domain.ErrTopicNameCase, 409, "topic_name_case"},
	{domain.ErrTopicChanged, 409, "topic_changed"},
	{domain.ErrDelayedChildProduce, 409, "delayed_child_produce"},
	{domain.ErrConflict, 409, "conflict"},
	{domain.ErrLogPoisoned, 500, "log_poisoned"},
	{domain.ErrWALFailed, 500, "wal_failed"},
	{domain.ErrNotImplemented, 501, "not_implemented"},
	{domain.ErrPrecondition, 412, "precondition"},
}

// codeBadPayload answers a request this node could not decode.
const codeBadPayload = "bad_payload"

// codeInternal answers an error no row of refusalTable matches.
const codeInternal = "internal"

// appendReply encodes a reply.
func appendReply(b []byte, status uint16, code, detail string, body []byte) []byte {
	b = appendU16(b, status)
	b = appendString(b, code)
	b = appendString(b, detail)
	return appendBytes(b, body)
}

// okReply encodes a success with body.
func okReply(body []byte) []byte {
	return appendReply(make([]byte, 0, 14+len(body)), statusOK, "", "", body)
}

// errReply encodes err as a refusal: its sentinel's status and code, the
// Refusal's detail when it has one. Errors of no known sentinel become 500
// "internal" (the owner's message stays in the owner's log).
func errReply(err error) []byte {
	status, code, detail := refusalOf(err)
	return appendReply(nil, status, code, detail, nil)
}

func refusalOf(err error) (uint16, string, string) {
	if errors.Is(err, ErrBadPayload) {
		return statusBadRequest, codeBadPayload, truncate(err.Error())
	}
	detail := ""
	var r *domain.Refusal
	if errors.As(err, &r) {
		detail = truncate(r.Detail)
	}
	for _, row := range refusalTable {
		if errors.Is(err, row.err) {
			return row.status, row.code, detail
		}
	}
	return statusInternal, codeInternal, ""
}

func truncate(s string) string {
	if len(s) > wireMessageMaxBytes {
		return s[:wireMessageMaxBytes]
	}
	return s
}

// reply is a decoded reply.
type reply struct {
	status uint16
	code   string
	detail string
	body   []byte
}

func decodeReply(p []byte) (reply, error) {
	r := reader{b: p}
	out := reply{
		status: r.u16("reply status"),
		code:   r.string("reply code", wireNameMaxBytes),
		detail: r.string("reply detail", wireMessageMaxBytes),
		body:   r.bytes("reply body"),
	}
	return out, r.end("reply")
}

// result is a decoded reply's success body, or its refusal as the owner's
// error (err).
func (rp reply) result(peer string, op Op) ([]byte, error) {
	if rp.code != "" {
		return nil, rp.err(peer, op)
	}
	return rp.body, nil
}

// err turns a refusal back into the owner's error: the sentinel of its code
// (as a *domain.Refusal when the owner's error carried a detail), wrapped
// with the peer and op. A code this node does not know is a RemoteError
// (ErrRemote) wrapped in domain.ErrNoAnswer, never a domain refusal: the
// outcome is then unknown.
func (rp reply) err(peer string, op Op) error {
	for _, row := range refusalTable {
		if row.code != rp.code {
			continue
		}
		if rp.detail != "" {
			return fmt.Errorf("quicpeer: %s refused op %d: %w", peer, op, domain.Refuse(row.err, rp.detail))
		}
		return fmt.Errorf("quicpeer: %s refused op %d: %w", peer, op, row.err)
	}
	msg := fmt.Sprintf("status %d %s", rp.status, rp.code)
	if rp.detail != "" {
		msg += ": " + rp.detail
	}
	return fmt.Errorf("%w: %w", domain.ErrNoAnswer, &RemoteError{Peer: peer, Op: op, Message: msg, Code: rp.code})
}
