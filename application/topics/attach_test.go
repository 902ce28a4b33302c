package topics_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// Ensure that an attach records the parent's committed high watermarks as
// the child's attach point (api.md §2.10.1; conformance 79's start) and a
// detach clears the link but keeps the child.
func TestAttachRecordsTheAttachPointAndDetachClearsIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := f.create(t, topics.CreateRequest{Caller: anyone, Name: "p"})
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "c"})
	f.commit(t, p, 1, 4)
	got, err := f.svc.Attach(context.Background(), topics.AttachRequest{Caller: anyone, Parent: "p", Child: "c", DelayMs: 1500})
	if err != nil || got.Role() != meta.RoleParent {
		t.Fatalf("attach: %+v %v", got, err)
	}
	c, _, _ := f.store.Topic("c")
	if fmt.Sprint(c.AttachOffsets) != "[0 4 0]" || c.FanoutDelayMs != 1500 || !idPattern.MatchString(c.AttachEpoch) {
		t.Fatalf("child %+v", c)
	}
	if err := f.svc.Detach(context.Background(), anyone, "p", "c"); err != nil {
		t.Fatal(err)
	}
	c, ok, _ := f.store.Topic("c")
	if !ok || c.Role() != meta.RoleStandalone || c.AttachEpoch != "" || c.AttachOffsets != nil {
		t.Fatalf("detached child %+v", c)
	}
	wantRefusal(t, f.svc.Detach(context.Background(), anyone, "p", "c"), domain.ErrTopicNotFound, "")
}

// Ensure that a parent recreated under an attach twice answers "topic
// changed since it was read" and links nothing.
func TestAttachParentRecreated(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "p"})
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "c"})
	f.store = &recreatingStore{MetadataStore: f.meta, t: t}
	f.build(t)
	_, err := f.svc.Attach(context.Background(), topics.AttachRequest{Caller: anyone, Parent: "p", Child: "c"})
	wantRefusal(t, err, domain.ErrTopicChanged, "")
	if c, _, _ := f.meta.Topic("c"); c.Parent != "" {
		t.Fatalf("linked anyway: %+v", c)
	}
}
