package topics_test

import (
	"context"
	"errors"
	"testing"

	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
)

func user(name string, grants ...meta.Grant) access.Principal {
	return access.FromUser(meta.User{Username: name, Grants: grants})
}

var (
	ops      = user("ops", meta.Grant{Action: "admin"})
	creator  = user("kim", meta.Grant{Action: "create", Patterns: []string{"orders-*"}})
	producer = user("pat", meta.Grant{Action: "produce", Patterns: []string{"orders-*"}})
)

func wantDenied(t *testing.T, err error, msg string) {
	t.Helper()
	var r *domain.Refusal
	if !errors.As(err, &r) || !errors.Is(err, domain.ErrForbidden) || r.Detail != msg {
		t.Fatalf("got %v, want 403 %q", err, msg)
	}
}

// ensure that a created topic records its authenticated creator as owner,
// and none with security off (api.md §4.5 invariant 5, §4.6).
func TestCreateRecordsCallerAsOwner(t *testing.T) {
	f := newFixture(t)
	if got := f.create(t, topics.CreateRequest{Caller: creator, Name: "orders-eu"}); got.Owner != "kim" {
		t.Fatalf("owner %q, want kim", got.Owner)
	}
	if got := f.create(t, topics.CreateRequest{Caller: access.Open("10.0.0.1"), Name: "open"}); got.Owner != "" {
		t.Fatalf("security-off create recorded owner %q", got.Owner)
	}
}

// ensure that create needs a create grant on the name, and a create as
// child also the parent's ownership, both before any field rule
// (conformance 32, 38).
func TestCreateNeedsGrantAndParentOwnership(t *testing.T) {
	f := newFixture(t)
	_, err := f.svc.Create(context.Background(), topics.CreateRequest{Caller: creator, Name: "billing"})
	wantDenied(t, err, access.MsgCreateNotAllowed)
	_, err = f.svc.Create(context.Background(), topics.CreateRequest{Caller: producer, Name: "orders-x", Partitions: -1})
	wantDenied(t, err, access.MsgCreateNotAllowed)
	f.create(t, topics.CreateRequest{Caller: ops, Name: "orders-admin"})
	_, err = f.svc.Create(context.Background(), topics.CreateRequest{Caller: creator, Name: "orders-child", Parent: "orders-admin"})
	wantDenied(t, err, access.MsgOwnerOrAdmin)
	f.create(t, topics.CreateRequest{Caller: creator, Name: "orders-mine"})
	if got := f.create(t, topics.CreateRequest{Caller: creator, Name: "orders-kid", Parent: "orders-mine"}); got.Parent != "orders-mine" || got.Owner != "kim" {
		t.Fatalf("create as child of an owned parent: %+v", got)
	}
}

// ensure that alter, schema registration and delete are for the owner or
// an admin, and a missing topic answers 404 whoever asks (conformance 63, 67).
func TestModifyNeedsOwnership(t *testing.T) {
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: ops, Name: "orders-eu"})
	ret := int64(0)
	_, err := f.svc.Alter(context.Background(), topics.AlterRequest{Caller: creator, Name: "orders-eu", RetentionMs: &ret})
	wantDenied(t, err, access.MsgOwnerOrAdmin)
	_, err = f.svc.Alter(context.Background(), topics.AlterRequest{Caller: creator, Name: "orders-eu", Schema: []byte(`true`)})
	wantDenied(t, err, access.MsgOwnerOrAdmin)
	_, err = f.svc.Delete(context.Background(), producer, "orders-eu")
	wantDenied(t, err, access.MsgOwnerOrAdmin)
	if _, err := f.svc.Delete(context.Background(), producer, "missing"); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("delete of a missing topic: %v", err)
	}
	f.create(t, topics.CreateRequest{Caller: creator, Name: "orders-mine"})
	if _, err := f.svc.Alter(context.Background(), topics.AlterRequest{Caller: creator, Name: "orders-mine", RetentionMs: &ret}); err != nil {
		t.Fatalf("owner alter: %v", err)
	}
	if _, err := f.svc.Delete(context.Background(), creator, "orders-mine"); err != nil {
		t.Fatalf("owner delete: %v", err)
	}
	if _, err := f.svc.Delete(context.Background(), ops, "orders-eu"); err != nil {
		t.Fatalf("admin delete: %v", err)
	}
}

// ensure that attach needs both topics managed and detach either
// (conformance 83).
func TestLinksNeedOwnership(t *testing.T) {
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: ops, Name: "orders-p"})
	f.create(t, topics.CreateRequest{Caller: creator, Name: "orders-c"})
	_, err := f.svc.Attach(context.Background(), topics.AttachRequest{Caller: creator, Parent: "orders-p", Child: "orders-c"})
	wantDenied(t, err, access.MsgOwnerOrAdmin)
	if _, err := f.svc.Attach(context.Background(), topics.AttachRequest{Caller: ops, Parent: "orders-p", Child: "orders-c"}); err != nil {
		t.Fatalf("admin attach: %v", err)
	}
	wantDenied(t, f.svc.Detach(context.Background(), producer, "orders-p", "orders-c"), access.MsgOwnerOrAdmin)
	if err := f.svc.Detach(context.Background(), creator, "orders-p", "orders-c"); err != nil {
		t.Fatalf("child owner detach: %v", err)
	}
}

// ensure that reads need any grant on the name, ownership or admin, and a
// topic list keeps only readable topics, cut before filtering
// (conformance 170-173).
func TestReadsAndListFiltering(t *testing.T) {
	f := newFixture(t)
	for _, name := range []string{"a", "b", "c", "z"} {
		f.create(t, topics.CreateRequest{Caller: ops, Name: name})
	}
	other := user("o", meta.Grant{Action: "produce", Patterns: []string{"other"}})
	_, err := f.svc.Describe(context.Background(), topics.DescribeRequest{Caller: other, Name: "a"})
	wantDenied(t, err, access.MsgNoGrant)
	_, err = f.svc.SchemaHistory(context.Background(), other, "a")
	wantDenied(t, err, access.MsgNoGrant)
	_, err = f.svc.ListChildren(context.Background(), other, "a")
	wantDenied(t, err, access.MsgNoGrant)
	if _, err := f.svc.Describe(context.Background(), topics.DescribeRequest{Caller: other, Name: "missing"}); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("describe missing: %v", err)
	}
	z := user("zc", meta.Grant{Action: "consume", Patterns: []string{"z"}})
	page, err := f.svc.List(context.Background(), z, "", 2)
	if err != nil || len(page.Topics) != 0 || page.Next != "b" {
		t.Fatalf("first page %+v %v, want empty with token b", page, err)
	}
	var seen []string
	for token := page.Next; token != ""; {
		p, err := f.svc.List(context.Background(), z, token, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, tp := range p.Topics {
			seen = append(seen, tp.Name)
		}
		token = p.Next
	}
	if len(seen) != 1 || seen[0] != "z" {
		t.Fatalf("pages listed %v, want [z]", seen)
	}
}
