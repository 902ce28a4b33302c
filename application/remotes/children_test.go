package remotes_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

const parentTopicID = "00000000000000a1"

// parent creates "orders" with 2 partitions owned by this node and commits
// records to partition 0, so its high watermark is n.
func (f *fixture) parent(t *testing.T, retentionMs int64, n int) {
	t.Helper()
	f.propose(t, &meta.CreateTopic{Name: "orders", ID: parentTopicID, Partitions: 2, VisibilityTimeoutMs: 30_000, RetentionMs: retentionMs})
	for p := range int32(2) {
		f.propose(t, &meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: parentTopicID, Partition: p, Owner: "n1"})
	}
	recs := make([]domain.Record, n)
	for i := range recs {
		recs[i] = domain.Record{Payload: []byte(`{"n":1}`)}
	}
	if n > 0 {
		if _, err := f.logs.CommitDurable(context.Background(), domain.PartitionRef{Topic: "orders", TopicID: parentTopicID, Partition: 0}, recs); err != nil {
			t.Fatal(err)
		}
	}
}

func (f *fixture) attach(t *testing.T, req remotes.AttachRequest) (remotes.AttachResult, error) {
	t.Helper()
	if req.Parent == "" {
		req.Parent = "orders"
	}
	if req.Child == "" {
		req.Child = "orders-dr"
	}
	if req.Remote == "" {
		req.Remote = "dr"
	}
	out, err := f.svc.AttachChild(context.Background(), admin, req)
	f.clock.Advance(5 * time.Second) // one check of a remote per 5 s
	return out, err
}

// Conformance 251, 252: a dry run resolves one start offset per parent
// partition and writes nothing; the attach writes the stub with the
// link, starting at the committed high watermark.
func TestAttachChild(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	f.target(t)
	f.parent(t, 0, 5)
	out, err := f.attach(t, remotes.AttachRequest{DryRun: true, Lanes: 4})
	if err != nil || !out.DryRun || len(out.Offsets) != 2 || out.Offsets[0] != 5 || out.Offsets[1] != 0 || len(out.Checks) != 1 {
		t.Fatalf("dry run: %v %+v", err, out)
	}
	if _, found, _ := f.meta.Topic("orders-dr"); found {
		t.Fatal("a dry run wrote the stub")
	}
	out, err = f.attach(t, remotes.AttachRequest{Lanes: 4, From: meta.RemoteFromEarliest})
	if err != nil {
		t.Fatal(err)
	}
	s := out.Stub
	if s.Partitions != 0 || s.Role() != meta.RoleChild || s.Parent != "orders" || s.Remote == nil || s.Remote.Name != "dr" ||
		s.Remote.Topic != "orders" || s.Remote.Lanes != 4 || s.Remote.From != "earliest" || s.Remote.TargetID != "00000000000000aa" {
		t.Fatalf("stub %+v %+v", s, s.Remote)
	}
	if len(s.AttachOffsets) != 2 || s.AttachOffsets[0] != 0 {
		t.Fatalf("earliest offsets %v", s.AttachOffsets)
	}
	out, err = f.attach(t, remotes.AttachRequest{DryRun: true, From: meta.RemoteFromUnconsumed, Child: "orders-dr2"})
	if err != nil || len(out.Offsets) != 2 || out.Offsets[0] != 3 || out.Offsets[1] != 3 {
		t.Fatalf("unconsumed: %v %+v", err, out.Offsets)
	}
}

// Conformance 249, 250: the refusals an attach answers before any check.
func TestAttachChildRefusals(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	f.target(t)
	f.parent(t, 3_600_000, 0)
	cases := []struct {
		req  remotes.AttachRequest
		want error
	}{
		{remotes.AttachRequest{Lanes: 9}, domain.ErrInvalidArgument},
		{remotes.AttachRequest{From: "latest"}, domain.ErrInvalidArgument},
		{remotes.AttachRequest{Remote: "ghost"}, domain.ErrInvalidArgument},
		{remotes.AttachRequest{Child: "orders"}, domain.ErrTopicExists},
		{remotes.AttachRequest{Parent: "nope"}, domain.ErrTopicNotFound},
		{remotes.AttachRequest{}, domain.ErrConflict}, // retention of one hour
	}
	for _, c := range cases {
		if _, err := f.attach(t, c.req); !errors.Is(err, c.want) {
			t.Errorf("%+v: %v, want %v", c.req, err, c.want)
		}
	}
}

// A target the checks refuse fails the attach with its class and writes
// nothing.
func TestAttachChildFailedCheck(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	n := f.target(t)
	n.admin = true
	f.parent(t, 0, 0)
	_, err := f.attach(t, remotes.AttachRequest{})
	var ce *remotes.CheckError
	if !errors.As(err, &ce) || ce.Class != "admin_credential" || len(ce.Checks) != 1 {
		t.Fatalf("err %v", err)
	}
	if _, found, _ := f.meta.Topic("orders-dr"); found {
		t.Fatal("stub written")
	}
}

// Conformance 253, 254: pause records the reason; skip on a link that is
// not stuck on that record is a conflict naming where it is.
func TestPauseResumeSkip(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	n := f.target(t)
	f.parent(t, 0, 0)
	if _, err := f.attach(t, remotes.AttachRequest{}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := f.svc.Pause(ctx, admin, "orders", "orders-dr", strings.Repeat("r", 257)); !errors.Is(err, domain.ErrInvalidArgument) {
		t.Fatalf("long reason: %v", err)
	}
	stub, err := f.svc.Pause(ctx, admin, "orders", "orders-dr", "maintenance")
	if err != nil || !stub.Remote.Paused || stub.Remote.PauseReason != "maintenance" || stub.Remote.PausedBy != "root" {
		t.Fatalf("pause: %v %+v", err, stub.Remote)
	}
	if _, err := f.svc.Pause(ctx, admin, "orders", "nope", ""); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("no such stub: %v", err)
	}
	var se *remotes.SkipError
	if _, err := f.svc.Skip(ctx, admin, "orders", "orders-dr", 0, 0); !errors.As(err, &se) || se.At != nil {
		t.Fatalf("skip not stuck: %v", err)
	}
	f.stuck.set(remotes.Blocked{Offset: 7, State: "rejected_record"})
	if _, err := f.svc.Skip(ctx, admin, "orders", "orders-dr", 0, 6); !errors.As(err, &se) || se.At == nil || se.At.Offset != 7 {
		t.Fatalf("skip elsewhere: %v", err)
	}
	stub, err = f.svc.Skip(ctx, admin, "orders", "orders-dr", 0, 7)
	if err != nil || len(stub.Remote.Skip) != 1 || stub.Remote.Skip[0].Offsets[0] != 7 {
		t.Fatalf("skip: %v %+v", err, stub.Remote)
	}
	n.mu.Lock()
	n.topic["id"] = "00000000000000ff" // the target was recreated
	n.mu.Unlock()
	if _, err := f.svc.Resume(ctx, admin, "orders", "orders-dr", false); !errorsAsClass(err, "target_replaced") {
		t.Fatalf("resume over a replaced target: %v", err)
	}
	f.clock.Advance(5 * time.Second)
	stub, err = f.svc.Resume(ctx, admin, "orders", "orders-dr", true)
	if err != nil || stub.Remote.Paused || stub.Remote.TargetID != "00000000000000ff" {
		t.Fatalf("resume accepting the target: %v %+v", err, stub.Remote)
	}
}

func errorsAsClass(err error, class string) bool {
	var ce *remotes.CheckError
	return errors.As(err, &ce) && ce.Class == class
}
