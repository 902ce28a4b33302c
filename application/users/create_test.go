package users_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/application/users"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Ensure that a create stores a hash of the password, stamps the clock and
// the caller, and answers the account without the hash.
func TestCreateStoresHashAnswersWithout(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.clock.Advance(time.Minute)
	got, err := f.svc.Create(context.Background(), f.principal(t, "ops"),
		users.CreateRequest{Username: "bob", Password: "bob-pw", Grants: produce("orders-*", "billing")})
	if err != nil {
		t.Fatal(err)
	}
	at := startTime.Add(time.Minute).UnixMilli()
	want := meta.User{Username: "bob", Grants: produce("orders-*", "billing"), CreatedAtMs: at, UpdatedAtMs: at}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("answer %+v, want %+v", got, want)
	}
	if !f.passwordIs(t, "bob", "bob-pw") || f.user(t, "bob").Root {
		t.Fatalf("stored %+v", f.user(t, "bob"))
	}
	if e := f.lastEntry(t); e.Type != meta.TypeCreateUser || e.Actor != "ops" || e.AtMs != at {
		t.Fatalf("entry %+v", e)
	}
	f.wantAudit(t, ports.AuditEvent{Event: ports.AuditUserCreate, Actor: "ops", Subject: "user bob", Outcome: ports.AuditOK})
	f.wantNoSecretAudited(t, "bob-pw", string(f.user(t, "bob").PasswordHash))
}

// Ensure that a create's refusals come in the route table's order, each
// with its sentinel and exact message, and that each is audited.
func TestCreateRefusalsInOrder(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 73)
	cases := []struct {
		name   string
		caller string
		req    users.CreateRequest
		err    error
		msg    string
	}{
		{"non-admin before everything", "alice", users.CreateRequest{Username: ".", Grants: admin()},
			domain.ErrForbidden, access.MsgAdminRequired},
		{"username required", "ops", users.CreateRequest{}, domain.ErrInvalidArgument, "username required"},
		{"dot", "ops", users.CreateRequest{Username: "."}, domain.ErrInvalidArgument, `username must not be "."`},
		{"dot dot", "ops", users.CreateRequest{Username: ".."}, domain.ErrInvalidArgument, `username must not be ".."`},
		{"charset", "ops", users.CreateRequest{Username: "a b"}, domain.ErrInvalidArgument,
			"username may contain only A-Z a-z 0-9 . _ -"},
		{"65 characters", "ops", users.CreateRequest{Username: strings.Repeat("u", 65)}, domain.ErrInvalidArgument,
			"username must be at most 64 characters"},
		{"password required", "ops", users.CreateRequest{Username: "bob", Grants: []meta.Grant{{Action: "x"}}},
			domain.ErrInvalidArgument, "password required"},
		{"password over 72 bytes", "ops", users.CreateRequest{Username: "bob", Password: long},
			domain.ErrInvalidArgument, "password must be at most 72 bytes"},
		{"non-ASCII counts bytes", "ops", users.CreateRequest{Username: "bob", Password: strings.Repeat("é", 37)},
			domain.ErrInvalidArgument, "password must be at most 72 bytes"},
		{"grant without pattern", "ops", users.CreateRequest{Username: "bob", Password: "p", Grants: produce()},
			domain.ErrInvalidArgument, `grant "produce" requires at least one topic pattern`},
		{"empty pattern", "ops", users.CreateRequest{Username: "bob", Password: "p", Grants: produce("")},
			domain.ErrInvalidArgument, `grant "produce" has an empty pattern`},
		{"bad pattern", "ops", users.CreateRequest{Username: "bob", Password: "p", Grants: produce("a b")},
			domain.ErrInvalidArgument, `grant "produce" pattern "a b" must be a topic name with an optional trailing '*'`},
		{"admin with patterns", "ops", users.CreateRequest{Username: "bob", Password: "p",
			Grants: []meta.Grant{{Action: "admin", Patterns: []string{"x"}}}},
			domain.ErrInvalidArgument, "admin grants are global and must not carry patterns"},
		{"unknown action", "ops", users.CreateRequest{Username: "bob", Password: "p", Grants: []meta.Grant{{Action: "x"}}},
			domain.ErrInvalidArgument, `unknown grant action "x"`},
		{"grant rule before confer", "ops", users.CreateRequest{Username: "bob", Password: "p",
			Grants: append(admin(), meta.Grant{Action: "x"})}, domain.ErrInvalidArgument, `unknown grant action "x"`},
		{"non-root admin confers admin", "ops", users.CreateRequest{Username: "alice", Password: "p", Grants: admin()},
			domain.ErrForbidden, access.MsgConferAdmin},
		{"exists", "ops", users.CreateRequest{Username: "alice", Password: "p"}, domain.ErrUserExists, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			before := f.meta.AppliedIndex()
			_, err := f.svc.Create(context.Background(), f.principal(t, c.caller), c.req)
			wantRefusal(t, err, c.err, c.msg)
			reason := c.msg
			if c.err == domain.ErrUserExists {
				reason = "already exists"
			} else if f.hasher.Hashes() != 3 || f.meta.AppliedIndex() != before {
				t.Fatalf("a refused create hashed (%d) or proposed", f.hasher.Hashes()-3)
			}
			f.wantAudit(t, ports.AuditEvent{Event: ports.AuditUserCreate, Actor: c.caller,
				Subject: auditSubject(c.req.Username), Outcome: ports.AuditRefused, Reason: reason})
		})
	}
}

func auditSubject(name string) string {
	if access.ValidUsername(name) != nil {
		return fmt.Sprintf("user %q", name[:min(len(name), 64)])
	}
	return "user " + name
}

// Ensure that a password of exactly 72 bytes, multi-byte characters
// included, is accepted.
func TestCreateAccepts72Bytes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pw := strings.Repeat("é", 36)
	if _, err := f.svc.Create(context.Background(), f.principal(t, "ops"), users.CreateRequest{Username: "bob", Password: pw}); err != nil {
		t.Fatal(err)
	}
	if !f.passwordIs(t, "bob", pw) {
		t.Fatal("stored hash is not of the password")
	}
}

// Ensure that only root confers admin (invariant 1), that security off acts
// as root, and that a non-root admin may confer scoped grants.
func TestCreateConferAdmin(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.svc.Create(ctx, f.principal(t, "admin"), users.CreateRequest{Username: "ops2", Password: "p", Grants: admin()}); err != nil {
		t.Fatalf("root conferring admin: %v", err)
	}
	open := access.Open("10.0.0.7:5000")
	if _, err := f.svc.Create(ctx, open, users.CreateRequest{Username: "ops3", Password: "p", Grants: admin()}); err != nil {
		t.Fatalf("security off conferring admin: %v", err)
	}
	if e := f.lastEntry(t); e.Actor != "10.0.0.7:5000" {
		t.Fatalf("actor %q, want the client address", e.Actor)
	}
	if _, err := f.svc.Create(ctx, f.principal(t, "ops"), users.CreateRequest{Username: "bob", Password: "p", Grants: produce("*")}); err != nil {
		t.Fatalf("non-root admin conferring produce: %v", err)
	}
	for _, name := range []string{"ops2", "ops3"} {
		if u := f.user(t, name); u.Root || !access.FromUser(u).Admin() {
			t.Fatalf("%s: %+v", name, u)
		}
	}
}

// Ensure that a failed proposal answers 503 saying the change may still be
// applied, and is audited as failed.
func TestCreateNoLeader(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.meta.FailPropose(fmt.Errorf("no leader: %w", meta.ErrUnavailable))
	_, err := f.svc.Create(context.Background(), f.principal(t, "ops"), users.CreateRequest{Username: "bob", Password: "p"})
	wantRefusal(t, err, domain.ErrUnavailable, "")
	if !strings.Contains(err.Error(), "may still be applied") {
		t.Fatalf("message %q", err)
	}
	if a := f.lastAudit(t); a.Outcome != ports.AuditFailed || a.Event != ports.AuditUserCreate {
		t.Fatalf("audit %+v", a)
	}
}

// Ensure that a hasher failure fails the create before anything is
// proposed.
func TestCreateHashFailure(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	before := f.meta.AppliedIndex()
	f.hasher.err = errors.New("hasher broke")
	_, err := f.svc.Create(context.Background(), f.principal(t, "ops"), users.CreateRequest{Username: "bob", Password: "p"})
	var r *domain.Refusal
	if err == nil || errors.As(err, &r) || f.meta.AppliedIndex() != before {
		t.Fatalf("err %v, applied %d -> %d", err, before, f.meta.AppliedIndex())
	}
}

// gateHasher blocks every Hash until released, reporting each entry.
type gateHasher struct {
	testHasher
	entered chan struct{}
	release chan struct{}
}

func (h *gateHasher) Hash(ctx context.Context, password []byte) ([]byte, error) {
	h.entered <- struct{}{}
	<-h.release
	return h.testHasher.Hash(ctx, password)
}

// Ensure that at most two hashes run at once per Service (internals
// §12.1): with two hashes in flight a third waits for a slot, and gives up
// when its request ends without ever reaching the hasher.
func TestCreateBoundsHashing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := &gateHasher{entered: make(chan struct{}, 8), release: make(chan struct{})}
	svc, err := users.New(f.store, h, f.creds, f.clock, f.audit)
	if err != nil {
		t.Fatal(err)
	}
	ops := f.principal(t, "ops")
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i := range 2 {
		wg.Go(func() {
			_, err := svc.Create(context.Background(), ops, users.CreateRequest{Username: fmt.Sprint("u", i), Password: "p"})
			errs <- err
		})
	}
	<-h.entered
	<-h.entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = svc.Create(ctx, ops, users.CreateRequest{Username: "u2", Password: "p"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("third create while two hash: %v", err)
	}
	if n := len(h.entered); n != 0 {
		t.Fatalf("%d hashes ran beside the two in flight", n)
	}
	close(h.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.Create(context.Background(), ops, users.CreateRequest{Username: "u2", Password: "p"}); err != nil {
		t.Fatalf("after the slots freed: %v", err)
	}
}

// Ensure that New refuses a missing dependency.
func TestNewRefusesNilDependency(t *testing.T) {
	t.Parallel()
	f := newEmptyFixture(t)
	if _, err := users.New(f.store, nil, f.creds, f.clock, f.audit); !errors.Is(err, users.ErrInvalidConfig) {
		t.Fatalf("nil hasher: %v", err)
	}
	if _, err := users.New(f.store, f.hasher, nil, f.clock, f.audit); !errors.Is(err, users.ErrInvalidConfig) {
		t.Fatalf("nil checker: %v", err)
	}
	if _, err := users.New(nil, f.hasher, f.creds, f.clock, f.audit); !errors.Is(err, users.ErrInvalidConfig) {
		t.Fatalf("nil store: %v", err)
	}
	if _, err := users.New(f.store, f.hasher, f.creds, nil, f.audit); !errors.Is(err, users.ErrInvalidConfig) {
		t.Fatalf("nil clock: %v", err)
	}
	if _, err := users.New(f.store, f.hasher, f.creds, f.clock, nil); !errors.Is(err, users.ErrInvalidConfig) {
		t.Fatalf("nil audit: %v", err)
	}
}
