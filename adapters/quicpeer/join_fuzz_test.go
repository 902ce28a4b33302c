package quicpeer

import (
	"errors"
	"testing"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// FuzzJoinPayloads ensures that the join request and answer decoders never
// panic and refuse only with ErrBadPayload (answers: or the refusal's
// domain error), and that an accepted request re-encodes to one that
// decodes the same.
func FuzzJoinPayloads(f *testing.F) {
	f.Add(appendJoinRequest(nil, sampleJoin()))
	f.Add(appendJoinRequest(nil, ports.JoinRequest{NodeID: "n"})[:9])
	f.Add(joinReply(ports.JoinAdmission{Status: ports.JoinDeferred, Reason: "voters full"}, nil))
	f.Add(joinReply(ports.JoinAdmission{}, &domain.NotLeaderError{LeaderID: "n1", LeaderAddr: "127.0.0.1:7942"}))
	f.Add(joinReply(ports.JoinAdmission{}, domain.ErrOlderRelease))
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := decodeJoinRequest(data)
		switch {
		case err != nil && !errors.Is(err, ErrBadPayload):
			t.Fatalf("request: unclassified error: %v", err)
		case err == nil:
			again, err := decodeJoinRequest(appendJoinRequest(nil, req))
			if err != nil || again != req {
				t.Fatalf("re-encoding decoded as %+v, %v; want %+v", again, err, req)
			}
		}
		rp, err := decodeReply(data)
		if err != nil {
			if !errors.Is(err, ErrBadPayload) {
				t.Fatalf("reply: unclassified error: %v", err)
			}
			return
		}
		a, err := decodeJoinAnswer(rp, "peer")
		if err == nil && a.Status == "" {
			t.Fatal("an admission without a status")
		}
		if err != nil && rp.code == "" && !errors.Is(err, ErrBadPayload) {
			t.Fatalf("answer: unclassified error: %v", err)
		}
	})
}
