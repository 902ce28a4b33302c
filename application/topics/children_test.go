package topics_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

const parentID = "00000000000000a1"

// lagFixture is a service that reads its own cursors and asks other
// owners through one fake: the fake's view of self is the local reader.
type lagFixture struct {
	*fixture
	lag *fake.PeerFanoutLag
}

func newLagFixture(t *testing.T, members ...string) *lagFixture {
	t.Helper()
	f := &lagFixture{fixture: newFixture(t, members...), lag: fake.NewPeerFanoutLag()}
	svc, err := topics.New(f.store, f.logs, f.schema, f.clock, rand.Reader, serverDefaults, self,
		topics.WithFanoutLag(f.lag.On(self)), topics.WithPeerFanoutLag(f.lag))
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	return f
}

// parent creates "p" with one partition per owner, partition i on
// owners[i] ("" leaves it unplaced).
func (f *lagFixture) parent(t *testing.T, owners ...string) {
	t.Helper()
	f.propose(t, &meta.CreateTopic{Name: "p", ID: parentID, Partitions: int32(len(owners)), VisibilityTimeoutMs: 30_000,
		MaxInFlight: 1, MaxAckedAhead: 1})
	for i, o := range owners {
		if o != "" {
			f.propose(t, &meta.AssignPartitionIfAbsent{Topic: "p", TopicID: parentID, Partition: int32(i), Owner: o})
		}
	}
}

// child creates name and attaches it under "p" at epoch.
func (f *lagFixture) child(t *testing.T, name, epoch string, delayMs int64) {
	t.Helper()
	f.propose(t, &meta.CreateTopic{Name: name, ID: fmt.Sprintf("%016x", len(name)+int(delayMs)), Partitions: 1,
		VisibilityTimeoutMs: 30_000, MaxInFlight: 1, MaxAckedAhead: 1})
	f.propose(t, &meta.AttachChild{Parent: "p", Child: name, Epoch: epoch, DelayMs: delayMs})
}

// at is partition i of "p" on node with high watermark hwm.
func (f *lagFixture) at(node string, i int32, hwm int64) domain.PartitionRef {
	ref := domain.PartitionRef{Topic: "p", TopicID: parentID, Partition: i}
	f.lag.Own(node, ref, hwm)
	return ref
}

func (f *lagFixture) list(t *testing.T) topics.Children {
	t.Helper()
	got, err := f.svc.ListChildren(context.Background(), anyone, "p")
	if err != nil {
		t.Fatalf("list children: %v", err)
	}
	return got
}

func cur(epoch string, next int64) ports.FanoutCursor {
	return ports.FanoutCursor{Epoch: epoch, NextOffset: next}
}

// Conformance 77 (api.md §2.11): children in attach order, each with its
// delay, its lag summed over the parent's partitions as high watermark
// minus next offset, complete only when every partition's cursor reported
// at the child's current epoch; each owner asked once for all its
// partitions and all children, with their epochs, within 2 s.
func TestChildrenLagSumsOverPartitions(t *testing.T) {
	t.Parallel()
	f := newLagFixture(t, self, "n2", "n3")
	f.parent(t, self, "n2", "n3", "n2")
	f.child(t, "c", "00000000000000e1", 0)
	f.child(t, "b", "00000000000000e2", 1500)
	p0, p1, p2, p3 := f.at(self, 0, 5), f.at("n2", 1, 4), f.at("n3", 2, 10), f.at("n2", 3, 0)
	f.lag.Cursor(self, p0, "c", cur("00000000000000e1", 2)) // 3 behind
	f.lag.Cursor("n2", p1, "c", cur("00000000000000e1", 4)) // caught up
	f.lag.Cursor("n3", p2, "c", cur("00000000000000e1", 7)) // 3 behind
	f.lag.Cursor("n2", p3, "c", cur("00000000000000e1", 0))
	f.lag.Cursor(self, p0, "b", cur("00000000000000e2", 5))
	f.lag.Cursor("n2", p1, "b", cur("00000000000000e2", 1)) // 3 behind
	f.lag.Cursor("n3", p2, "b", cur("00000000000000e0", 0)) // an older attach's file: not reported
	f.lag.Cursor("n2", p3, "b", cur("00000000000000e2", 0))
	start := time.Now()
	got := f.list(t)
	want := topics.Children{Parent: "p", ParentID: parentID, Children: []topics.ChildLag{
		{Name: "c", DelayMs: 0, LagMessages: 6, LagComplete: true},
		{Name: "b", DelayMs: 1500, LagMessages: 3, LagComplete: false},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	children := []ports.ChildEpoch{{Child: "c", Epoch: "00000000000000e1"}, {Child: "b", Epoch: "00000000000000e2"}}
	wantParts := map[string][]int32{self: {0}, "n2": {1, 3}, "n3": {2}}
	calls := f.lag.Calls()
	if len(calls) != len(wantParts) {
		t.Fatalf("%d calls %+v, want one per owner", len(calls), calls)
	}
	for _, c := range calls {
		if c.Parent != "p" || c.ParentID != parentID || !reflect.DeepEqual(c.Parts, wantParts[c.Node]) || !reflect.DeepEqual(c.Children, children) {
			t.Fatalf("call %+v, want %s's partitions %v with %v", c, c.Node, wantParts[c.Node], children)
		}
		if c.Node != self && (c.Deadline.IsZero() || c.Deadline.After(start.Add(2*time.Second+time.Second))) {
			t.Fatalf("call to %s had deadline %v, want about 2 s", c.Node, c.Deadline)
		}
	}
}

// ensure that an owner that cannot report (a transport failure, another
// incarnation, a dead member never asked) leaves every child incomplete
// with the lag of the partitions that did report: a lower bound
// (api.md §2.11).
func TestChildrenOwnerFailureLeavesALowerBound(t *testing.T) {
	t.Parallel()
	for name, breakIt := range map[string]func(f *lagFixture){
		"transport_failure": func(f *lagFixture) { f.lag.Fail("n2", nil) },
		"owner_refuses":     func(f *lagFixture) { f.lag.Fail("n2", domain.ErrTopicNotFound) },
		"owner_dead": func(f *lagFixture) {
			f.propose(t, &meta.MemberDead{ID: "n2"})
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newLagFixture(t, self, "n2")
			f.parent(t, self, "n2")
			f.child(t, "c", "00000000000000e1", 0)
			f.lag.Cursor(self, f.at(self, 0, 9), "c", cur("00000000000000e1", 4))
			f.lag.Cursor("n2", f.at("n2", 1, 100), "c", cur("00000000000000e1", 0))
			breakIt(f)
			got := f.list(t).Children
			if want := []topics.ChildLag{{Name: "c", LagMessages: 5, LagComplete: false}}; !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
}

// ensure that a child whose cursors have not anchored yet (no position at
// its epoch anywhere) is incomplete with lag 0, and becomes complete once
// every cursor reports (conformance 77: false until anchored).
func TestChildrenIncompleteUntilAnchored(t *testing.T) {
	t.Parallel()
	f := newLagFixture(t, self, "n2")
	f.parent(t, self, "n2")
	f.child(t, "c", "00000000000000e1", 0)
	p0, p1 := f.at(self, 0, 3), f.at("n2", 1, 2)
	if got := f.list(t).Children; !reflect.DeepEqual(got, []topics.ChildLag{{Name: "c"}}) {
		t.Fatalf("before anchoring: %+v", got)
	}
	f.lag.Cursor(self, p0, "c", cur("00000000000000e1", 3))
	f.lag.Cursor("n2", p1, "c", cur("00000000000000e1", 2))
	if got := f.list(t).Children; !reflect.DeepEqual(got, []topics.ChildLag{{Name: "c", LagComplete: true}}) {
		t.Fatalf("anchored and caught up: %+v", got)
	}
}

// ensure that an unplaced parent partition counts as reported with lag 0
// (nothing can be committed before it has an owner), so it does not hold
// the lag incomplete, and is never asked about.
func TestChildrenUnplacedPartitionCountsAsReported(t *testing.T) {
	t.Parallel()
	f := newLagFixture(t, self)
	f.parent(t, self, "")
	f.child(t, "c", "00000000000000e1", 0)
	f.lag.Cursor(self, f.at(self, 0, 4), "c", cur("00000000000000e1", 1))
	if got := f.list(t).Children; !reflect.DeepEqual(got, []topics.ChildLag{{Name: "c", LagMessages: 3, LagComplete: true}}) {
		t.Fatalf("got %+v", got)
	}
	if calls := f.lag.Calls(); len(calls) != 1 || !reflect.DeepEqual(calls[0].Parts, []int32{0}) {
		t.Fatalf("calls %+v, want partition 0 alone", calls)
	}
}

// Conformance 78: a standalone topic and a child list no children ([],
// never nil); a missing topic is domain.ErrTopicNotFound.
func TestChildrenOfStandaloneAndChildAreEmpty(t *testing.T) {
	t.Parallel()
	f := newLagFixture(t, self)
	f.parent(t, self)
	f.child(t, "c", "00000000000000e1", 0)
	f.propose(t, &meta.CreateTopic{Name: "alone", ID: "00000000000000b1", Partitions: 3, VisibilityTimeoutMs: 1, MaxInFlight: 1, MaxAckedAhead: 1})
	for _, name := range []string{"alone", "c"} {
		got, err := f.svc.ListChildren(context.Background(), anyone, name)
		if err != nil || got.Parent != name || got.Children == nil || len(got.Children) != 0 {
			t.Fatalf("%s: %+v, %v", name, got, err)
		}
	}
	_, err := f.svc.ListChildren(context.Background(), anyone, "missing")
	wantRefusal(t, err, domain.ErrTopicNotFound, "")
}

// ensure that a service that cannot read cursors (no lag readers wired)
// still lists its children, every one incomplete.
func TestChildrenWithoutLagReadersAreIncomplete(t *testing.T) {
	t.Parallel()
	f := newLagFixture(t, self, "n2")
	f.parent(t, self, "n2")
	f.child(t, "c", "00000000000000e1", 0)
	f.build(t) // no lag options
	if got := f.list(t).Children; !reflect.DeepEqual(got, []topics.ChildLag{{Name: "c"}}) {
		t.Fatalf("got %+v", got)
	}
}

// ensure that a remote child's stub is listed in its place with the lag of
// its cursors, asked like any child's.
func TestChildrenRemoteStubListedWithItsLag(t *testing.T) {
	t.Parallel()
	f := newLagFixture(t, self)
	f.parent(t, self)
	f.child(t, "c", "00000000000000e1", 0)
	f.propose(t, &meta.PutRemote{Name: "dr", ID: "00000000000000f1", URL: "https://dr.example:8443", Username: "u",
		Credential: meta.RemoteCredential{SealedPassword: []byte("x"), KeyVersion: "0000000000000001", Fingerprint: "0123456789ab"},
		Limits: meta.RemoteLimits{MaxInFlight: 1, RequestTimeoutMs: 5_000, IdleConnTimeoutMs: 1_000, ConnMaxAgeMs: 10_000,
			CheckIntervalMs: 10_000, Compression: "none"}, Salt: make([]byte, 32)})
	f.propose(t, &meta.AttachRemoteChild{Parent: "p", ParentID: parentID, Child: "p-dr", ChildID: "00000000000000c1",
		Epoch: "00000000000000e9", Remote: "dr", RemoteID: "00000000000000f1", RemoteTopic: "p", From: meta.RemoteFromAttach, Lanes: 1})
	f.lag.Cursor(self, f.at(self, 0, 2), "c", cur("00000000000000e1", 2))
	f.lag.Cursor(self, f.at(self, 0, 2), "p-dr", cur("00000000000000e9", 1))
	want := []topics.ChildLag{{Name: "c", LagComplete: true}, {Name: "p-dr", LagMessages: 1, LagComplete: true}}
	if got := f.list(t).Children; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if calls := f.lag.Calls(); len(calls) != 1 || len(calls[0].Children) != 2 || calls[0].Children[1].Child != "p-dr" {
		t.Fatalf("calls %+v, want c and p-dr asked", calls)
	}
}

// ensure that at most 16 owners are asked at once (internals.md §6.6).
func TestChildrenAskAtMost16OwnersAtOnce(t *testing.T) {
	t.Parallel()
	owners := []string{self}
	for i := 2; i <= 21; i++ {
		owners = append(owners, fmt.Sprintf("n%d", i))
	}
	f := newLagFixture(t, owners...)
	f.parent(t, owners[1:]...)
	f.child(t, "c", "00000000000000e1", 0)
	for i, o := range owners[1:] {
		f.lag.Cursor(o, f.at(o, int32(i), 1), "c", cur("00000000000000e1", 0))
	}
	release := f.lag.Block()
	defer release()
	done := make(chan topics.Children, 1)
	go func() { done <- f.list(t) }()
	waitUntil(t, "16 owners asked at once", func() bool { return f.lag.InFlight() >= 16 })
	for range 1000 { // give a 17th call every chance to start: it must not
		runtime.Gosched()
	}
	release()
	got := <-done
	if want := []topics.ChildLag{{Name: "c", LagMessages: 20, LagComplete: true}}; !reflect.DeepEqual(got.Children, want) {
		t.Fatalf("got %+v, want %+v", got.Children, want)
	}
	if most := f.lag.MostInFlight(); most != 16 {
		t.Fatalf("%d owners asked at once, want 16", most)
	}
}

// ensure that a listing whose caller gives up while owners have not
// answered returns at once, those owners' partitions unreported.
func TestChildrenCallerGivesUp(t *testing.T) {
	t.Parallel()
	f := newLagFixture(t, self, "n2", "n3")
	f.parent(t, self, "n2", "n3")
	f.child(t, "c", "00000000000000e1", 0)
	for i, o := range []string{self, "n2", "n3"} {
		f.lag.Cursor(o, f.at(o, int32(i), 1), "c", cur("00000000000000e1", 0))
	}
	release := f.lag.Block()
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan topics.Children, 1)
	go func() {
		got, err := f.svc.ListChildren(ctx, anyone, "p")
		if err != nil {
			t.Errorf("list children: %v", err)
		}
		done <- got
	}()
	waitUntil(t, "every owner asked", func() bool { return f.lag.InFlight() == 3 })
	cancel()
	if got := (<-done).Children; !reflect.DeepEqual(got, []topics.ChildLag{{Name: "c"}}) {
		t.Fatalf("got %+v", got)
	}
}
