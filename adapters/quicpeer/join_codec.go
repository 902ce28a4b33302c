package quicpeer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// JoinCluster (op 21) payloads, internals.md §9.3. Part of the wire format
// and must never change:
//
//	request   node_id string | raft_addr string | data_dir_empty bool |
//	          [ entry_types u8 ]
//	reply     the reply envelope of status.go, with a JSON body:
//	          200                {"status":"staged|deferred|promoted|voter","reason":"..."}
//	          421 not_leader     {"error":"not the metastore leader","leader_id":"...","leader_addr":"..."}
//	          412 no_cluster, 409 tombstoned, 409 older_release, 400, 503: no body
//
// The trailing entry type is what a 3.0.x node does not know; a request
// without it means the legacy set. A 3.0.x leader answers "joined" (added
// as a voter at once), read here as "voter". JSON bodies decode strictly:
// one object, no unknown field, nothing after it.

// codeNotLeader is the refusal code of a 421 join answer.
const codeNotLeader = "not_leader"

// msgNotLeader is the error text of a 421 join answer's body.
const msgNotLeader = "not the metastore leader"

// joinStatusLegacy is a 3.0.x leader's answer for a node added as a voter.
const joinStatusLegacy = "joined"

func appendJoinRequest(b []byte, req ports.JoinRequest) []byte {
	b = appendString(b, req.NodeID)
	b = appendString(b, req.RaftAddr)
	b = appendBool(b, req.DataDirEmpty)
	return appendU8(b, uint8(req.EntryTypes))
}

// decodeJoinRequest decodes p; errors wrap ErrBadPayload.
func decodeJoinRequest(p []byte) (ports.JoinRequest, error) {
	r := reader{b: p}
	req := ports.JoinRequest{
		NodeID:       r.string("node id", wireNameMaxBytes),
		RaftAddr:     r.string("raft address", wireNameMaxBytes),
		DataDirEmpty: r.bool("data dir empty"),
	}
	if r.err == nil && len(r.b) > 0 {
		req.EntryTypes = meta.EntryType(r.u8("entry types"))
	}
	if err := r.end("join request"); err != nil {
		return ports.JoinRequest{}, fmt.Errorf("decode join request: %w", err)
	}
	return req, nil
}

// joinAdmittedBody is the JSON body of a 200 join answer.
type joinAdmittedBody struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// joinNotLeaderBody is the JSON body of a 421 join answer.
type joinNotLeaderBody struct {
	Error      string `json:"error"`
	LeaderID   string `json:"leader_id"`
	LeaderAddr string `json:"leader_addr"`
}

// joinReply encodes the answer to a join: the admission, or err as its
// refusal (a *domain.NotLeaderError with the leader it names).
func joinReply(a ports.JoinAdmission, err error) []byte {
	var nl *domain.NotLeaderError
	switch {
	case err == nil:
		return okReply(mustJSON(joinAdmittedBody{Status: a.Status, Reason: a.Reason}))
	case errors.As(err, &nl):
		body := mustJSON(joinNotLeaderBody{Error: msgNotLeader, LeaderID: nl.LeaderID, LeaderAddr: nl.LeaderAddr})
		return appendReply(nil, 421, codeNotLeader, msgNotLeader, body)
	}
	return errReply(err)
}

// mustJSON marshals a body of plain strings, which cannot fail.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("quicpeer: marshal %T: %v", v, err))
	}
	return b
}

// decodeJoinAnswer turns a decoded reply into the joiner's outcome: the
// admission, a *domain.NotLeaderError, or the refusal's domain error.
// Errors of bodies that do not decode wrap ErrBadPayload.
func decodeJoinAnswer(rp reply, peer string) (ports.JoinAdmission, error) {
	switch rp.code {
	case "":
		var body joinAdmittedBody
		if err := strictJSON(rp.body, &body); err != nil {
			return ports.JoinAdmission{}, unreadableReply("join", peer, err)
		}
		return admission(body, peer)
	case codeNotLeader:
		var body joinNotLeaderBody
		if len(rp.body) > 0 {
			if err := strictJSON(rp.body, &body); err != nil {
				return ports.JoinAdmission{}, unreadableReply("join", peer, err)
			}
		}
		return ports.JoinAdmission{}, &domain.NotLeaderError{LeaderID: body.LeaderID, LeaderAddr: body.LeaderAddr}
	}
	return ports.JoinAdmission{}, rp.err(peer, OpJoinCluster)
}

func admission(body joinAdmittedBody, peer string) (ports.JoinAdmission, error) {
	switch body.Status {
	case ports.JoinStaged, ports.JoinDeferred, ports.JoinPromoted, ports.JoinVoter:
		return ports.JoinAdmission{Status: body.Status, Reason: body.Reason}, nil
	case joinStatusLegacy:
		return ports.JoinAdmission{Status: ports.JoinVoter, Reason: body.Reason}, nil
	}
	return ports.JoinAdmission{}, unreadableReply("join", peer, fmt.Errorf("status %q: %w", body.Status, ErrBadPayload))
}

// strictJSON decodes exactly one JSON object of v's fields from b.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("json body: %v: %w", err, ErrBadPayload)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("json body: data after the object: %w", ErrBadPayload)
	}
	return nil
}
