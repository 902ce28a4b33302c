package remotes_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Conformance 241: a valid create answers the remote with credential
// version 1, the default limits, revision 1 and a fingerprint, and nothing
// holding the password.
func TestCreateAnswersTheRemoteWithoutItsPassword(t *testing.T) {
	f := newFixture(t, true)
	v := f.create(t, "dr")
	r := v.Remote
	if r.Name != "dr" || len(r.ID) != 16 || r.URL != targetURL || r.Username != "replicator" {
		t.Fatalf("remote %+v", r)
	}
	if r.CredentialVersion != 1 || r.Revision != 1 || r.Fingerprint == "" || r.SealedPassword != nil {
		t.Fatalf("bookkeeping %+v", r)
	}
	if r.Limits != (meta.RemoteLimits{MaxInFlight: 16, RequestTimeoutMs: 30000, IdleConnTimeoutMs: 30000,
		ConnMaxAgeMs: 300000, CheckIntervalMs: 60000, Compression: "none"}) {
		t.Fatalf("limits %+v", r.Limits)
	}
	b, _ := json.Marshal(v)
	if strings.Contains(string(b), testPassword) {
		t.Fatal("the answer holds the password")
	}
	stored, _ := f.meta.Remotes()
	if len(stored) != 1 {
		t.Fatalf("stored %d remotes", len(stored))
	}
	if _, found, _ := f.meta.RemoteSalt(); !found {
		t.Fatal("the first create did not mint the cluster salt")
	}
	// This node leads: its line as the receiving node and the leader's
	// authoritative one, tied by the request id (internals.md §7.10).
	if lines := f.audit.Events(); len(lines) != 2 || lines[0].Outcome != ports.AuditCommitted || !lines[0].Leader ||
		lines[1].Outcome != ports.AuditOK || lines[1].RequestID != lines[0].RequestID {
		t.Fatalf("audit %+v", lines)
	}
}

// Conformance 239: bad fields are 400s whose message never holds the
// password; nothing is stored.
func TestCreateRefusesBadFieldsWithoutEchoingThePassword(t *testing.T) {
	f := newFixture(t, true)
	f.transport.Refuse("localhost")
	cases := map[string]remotes.CreateRequest{
		"http url":      {Name: "dr", URL: "http://dr.example.com", Username: "u", Password: []byte(testPassword)},
		"name B":        {Name: "B", URL: targetURL, Username: "u", Password: []byte(testPassword)},
		"short pw":      {Name: "dr", URL: targetURL, Username: "u", Password: []byte("23-bytes-password-xxxxx")},
		"long pw":       {Name: "dr", URL: targetURL, Username: "u", Password: []byte(strings.Repeat("p", 73))},
		"bad username":  {Name: "dr", URL: targetURL, Username: "a b", Password: []byte(testPassword)},
		"guarded host":  {Name: "dr", URL: "https://localhost", Username: "u", Password: []byte(testPassword)},
		"ca not pem":    {Name: "dr", URL: targetURL, Username: "u", Password: []byte(testPassword), CAPEM: "hello"},
		"limit 0":       {Name: "dr", URL: targetURL, Username: "u", Password: []byte(testPassword), Limits: remotes.LimitsPatch{MaxInFlight: ptr[int32](0)}},
		"compression x": {Name: "dr", URL: targetURL, Username: "u", Password: []byte(testPassword), Limits: remotes.LimitsPatch{Compression: ptr("gzip")}},
	}
	for name, req := range cases {
		_, err := f.svc.Create(context.Background(), admin, req)
		if !errors.Is(err, domain.ErrInvalidArgument) {
			t.Errorf("%s: %v, want invalid argument", name, err)
			continue
		}
		if strings.Contains(err.Error(), string(req.Password)) {
			t.Errorf("%s: message %q holds the password", name, err)
		}
	}
	if all, _ := f.meta.Remotes(); len(all) != 0 {
		t.Fatalf("%d remotes stored", len(all))
	}
}

// Conformance 240: without an encrypted API hop a create is a 412 naming
// the setting, and nothing is stored.
func TestCreateNeedsAnEncryptedHop(t *testing.T) {
	f := newFixture(t, false)
	_, err := f.svc.Create(context.Background(), admin, remotes.CreateRequest{Name: "dr", URL: targetURL, Username: "u", Password: []byte(testPassword)})
	if !errors.Is(err, domain.ErrPrecondition) || !strings.Contains(err.Error(), "remotes.api_hop_encrypted") {
		t.Fatalf("err %v", err)
	}
	if all, _ := f.meta.Remotes(); len(all) != 0 {
		t.Fatal("stored")
	}
}

func TestCreateNeedsAUsableSecret(t *testing.T) {
	f := newFixture(t, true)
	f.keyring.Refuse(true)
	_, err := f.svc.Create(context.Background(), admin, remotes.CreateRequest{Name: "dr", URL: targetURL, Username: "u", Password: []byte(testPassword)})
	if !errors.Is(err, domain.ErrPrecondition) {
		t.Fatalf("err %v", err)
	}
}

// Conformance 238 and 237: only an admin, and only with security on.
func TestRemotesNeedAnAdminWithSecurityOn(t *testing.T) {
	f := newFixture(t, true)
	bob := access.FromUser(meta.User{Username: "bob", Grants: []meta.Grant{{Action: access.ActionProduce, Patterns: []string{"*"}}}})
	for name, p := range map[string]access.Principal{"non-admin": bob, "security off": access.Open("127.0.0.1")} {
		if _, err := f.svc.List(context.Background(), p, false); !errors.Is(err, domain.ErrForbidden) {
			t.Errorf("%s list: %v", name, err)
		}
		if _, err := f.svc.Create(context.Background(), p, remotes.CreateRequest{Name: "dr"}); !errors.Is(err, domain.ErrForbidden) {
			t.Errorf("%s create: %v", name, err)
		}
	}
}

// Conformance 242: a second create of one name is a conflict.
func TestCreateTwiceConflicts(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	_, err := f.svc.Create(context.Background(), admin, remotes.CreateRequest{Name: "dr", URL: targetURL, Username: "u", Password: []byte(testPassword)})
	if !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("err %v", err)
	}
}

// Conformance 244: the eleventh remote write within a minute is refused
// with a retry delay; a minute later writes go through again.
func TestRemoteWritesAreTenAMinute(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	for i := 2; i <= 10; i++ {
		if _, err := f.svc.Update(context.Background(), admin, "dr", remotes.UpdateRequest{Limits: remotes.LimitsPatch{MaxInFlight: ptr(int32(i))}}); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		f.clock.Advance(time.Second)
	}
	_, err := f.svc.Update(context.Background(), admin, "dr", remotes.UpdateRequest{Limits: remotes.LimitsPatch{MaxInFlight: ptr[int32](11)}})
	var later *domain.RetryLater
	if !errors.Is(err, domain.ErrRateLimited) || !errors.As(err, &later) || later.Seconds != 51 {
		t.Fatalf("11th write: %v %+v", err, later)
	}
	f.clock.Advance(51 * time.Second)
	if _, err := f.svc.Update(context.Background(), admin, "dr", remotes.UpdateRequest{Limits: remotes.LimitsPatch{MaxInFlight: ptr[int32](11)}}); err != nil {
		t.Fatalf("after the minute: %v", err)
	}
}

// Conformance 243.
func TestUpdateRules(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	ctx := context.Background()
	if _, err := f.svc.Update(ctx, admin, "dr", remotes.UpdateRequest{URL: ptr("https://other:443")}); !errors.Is(err, domain.ErrInvalidArgument) {
		t.Fatalf("url without password: %v", err)
	}
	v, err := f.svc.Update(ctx, admin, "dr", remotes.UpdateRequest{Limits: remotes.LimitsPatch{MaxInFlight: ptr[int32](32)}})
	if err != nil || v.Remote.Limits.MaxInFlight != 32 || v.Remote.Revision != 2 || v.Remote.CredentialVersion != 1 {
		t.Fatalf("limits: %v %+v", err, v.Remote)
	}
	if _, err := f.svc.Update(ctx, admin, "dr", remotes.UpdateRequest{Limits: remotes.LimitsPatch{MaxInFlight: ptr[int32](0)}}); !errors.Is(err, domain.ErrInvalidArgument) {
		t.Fatalf("limit 0: %v", err)
	}
	if _, err := f.svc.Update(ctx, admin, "dr", remotes.UpdateRequest{}); !errors.Is(err, domain.ErrInvalidArgument) {
		t.Fatalf("nothing: %v", err)
	}
	if _, err := f.svc.Update(ctx, admin, "ghost", remotes.UpdateRequest{Limits: remotes.LimitsPatch{MaxInFlight: ptr[int32](3)}}); !errors.Is(err, domain.ErrRemoteNotFound) {
		t.Fatalf("ghost: %v", err)
	}
	v, err = f.svc.Update(ctx, admin, "dr", remotes.UpdateRequest{URL: ptr("https://other.example.com:8443"), Password: []byte(testPassword + "-new")})
	if err != nil || v.Remote.CredentialVersion != 2 || v.Remote.URL != "https://other.example.com:8443" {
		t.Fatalf("url with password: %v %+v", err, v.Remote)
	}
}

// Conformance 248: a delete while a remote child uses the remote names
// the links; force deletes anyway.
func TestDeleteInUse(t *testing.T) {
	f := newFixture(t, true)
	v := f.create(t, "dr")
	f.propose(t, &meta.CreateTopic{Name: "orders", ID: "00000000000000a1", Partitions: 1, VisibilityTimeoutMs: 30_000})
	f.propose(t, &meta.AttachRemoteChild{Parent: "orders", ParentID: "00000000000000a1", Child: "orders-dr", ChildID: "00000000000000b1",
		Epoch: "00000000000000e1", Offsets: []int64{0}, Remote: "dr", RemoteID: v.Remote.ID, RemoteTopic: "orders", From: meta.RemoteFromAttach, Lanes: 1})
	err := f.svc.Delete(context.Background(), admin, "dr", false)
	var inUse *remotes.InUseError
	if !errors.As(err, &inUse) || len(inUse.Links) != 1 || inUse.Links[0] != "orders/orders-dr" || !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("err %v", err)
	}
	if err := f.svc.Delete(context.Background(), admin, "dr", true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Get(context.Background(), admin, "dr", false); !errors.Is(err, domain.ErrRemoteNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}

// Conformance 242: the listing carries the key version and the remote;
// nodes=false leaves the members out.
func TestListAndGet(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	l, err := f.svc.List(context.Background(), admin, true)
	if err != nil || len(l.Remotes) != 1 || l.KeyVersion == "" || len(l.Remotes[0].Nodes) == 0 {
		t.Fatalf("list %v %+v", err, l)
	}
	if st := l.Remotes[0].Nodes[0]; st.Node != "n1" || st.State != remotes.StateReady || st.CredentialVersion != 1 {
		t.Fatalf("node state %+v", st)
	}
	v, err := f.svc.Get(context.Background(), admin, "dr", false)
	if err != nil || v.Nodes != nil || v.Remote.SealedPassword != nil {
		t.Fatalf("get %v %+v", err, v)
	}
	if _, err := f.svc.Get(context.Background(), admin, "ghost", false); !errors.Is(err, domain.ErrRemoteNotFound) {
		t.Fatalf("ghost %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
