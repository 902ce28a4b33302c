package consume_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// attachStub registers remote "dr" and attaches stub "orders-dr" under
// parent as a remote child.
func (e *env) attachStub(parent meta.Topic) {
	e.t.Helper()
	e.propose(&meta.PutRemote{Name: "dr", ID: "00000000000000d1", URL: "https://dr.example.com", Username: "replicator",
		Credential: meta.RemoteCredential{SealedPassword: []byte("sealed"), KeyVersion: "0123456789abcdef", Fingerprint: "0123456789ab"},
		Limits: meta.RemoteLimits{MaxInFlight: 16, RequestTimeoutMs: 30000, IdleConnTimeoutMs: 30000, ConnMaxAgeMs: 300000,
			CheckIntervalMs: 60000, Compression: "none"}, Salt: bytes.Repeat([]byte{7}, 32)})
	e.propose(&meta.AttachRemoteChild{Parent: parent.Name, ParentID: parent.ID, Child: "orders-dr", ChildID: "00000000000000b1",
		Epoch: "00000000000000e1", Offsets: make([]int64, parent.Partitions), Remote: "dr", RemoteID: "00000000000000d1",
		RemoteTopic: parent.Name, From: meta.RemoteFromAttach, Lanes: 1})
}

// Conformance 252: a consume, a replay and an ack on a remote child's stub
// are 409s that say where the records live.
func TestStubRefusesConsumeAndAck(t *testing.T) {
	e := newEnv(t, consume.Options{})
	e.attachStub(e.createTopic("orders", 1, nil, nil))
	ctx := context.Background()
	want := `remote child "orders-dr" lives on remote dr; consume it there`
	_, err := e.svc.Consume(ctx, consume.Request{Topic: "orders-dr", Mode: consume.ModePinned, Identity: "c"})
	if !errors.Is(err, domain.ErrConflict) || !strings.Contains(err.Error(), want) {
		t.Fatalf("consume: %v", err)
	}
	if err := e.svc.Ack(ctx, "orders-dr", domain.ReceiptHandle{}); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("ack: %v", err)
	}
}
