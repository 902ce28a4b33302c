package leaderconfirm_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

func topicID(n int) string { return fmt.Sprintf("%016x", n) }

func createEntry(name string, n int) meta.Envelope {
	return meta.Envelope{AtMs: 1, Event: &meta.CreateTopic{Name: name, ID: topicID(n), Partitions: 3, VisibilityTimeoutMs: 30_000}}
}

func propose(t *testing.T, s *fake.MetaStore, ev meta.Event) {
	t.Helper()
	got, err := s.Propose(context.Background(), meta.Envelope{AtMs: 1, Event: ev})
	if err != nil || !got.Result.OK() {
		t.Fatalf("%s: %+v %v", ev.Type(), got, err)
	}
}

func createTopic(t *testing.T, s *fake.MetaStore, name string, n int) {
	t.Helper()
	propose(t, s, createEntry(name, n).Event)
}

// Ensure that a topic is reported gone only when absent or recreated, and
// that present topics and failed barriers keep the data.
func TestTopicGone(t *testing.T) {
	t.Parallel()
	s := fake.NewMetaStore()
	createTopic(t, s, "live", 1)
	c := leaderconfirm.New(s)
	ctx := context.Background()
	cases := []struct {
		name        string
		topic       string
		id          domain.TopicID
		wantDestroy bool
	}{
		{"absent_topic_is_gone", "never", "", true},
		{"same_incarnation_is_kept", "live", domain.TopicID(topicID(1)), false},
		{"name_alone_is_kept", "live", "", false},
		{"other_incarnation_is_gone", "live", domain.TopicID(topicID(2)), true},
	}
	for _, tc := range cases {
		if d := c.TopicGone(ctx, tc.topic, tc.id); d.Destroy != tc.wantDestroy || d.Err != nil {
			t.Errorf("%s: %+v", tc.name, d)
		}
	}
	s.FailBarrier(meta.ErrUnavailable)
	if d := c.TopicGone(ctx, "never", ""); d.Destroy || !errors.Is(d.Err, meta.ErrUnavailable) {
		t.Fatalf("barrier failure must keep: %+v", d)
	}
}

// Story F4: a replica whose state machine lags (an election winner replaying
// its log) must not confirm destruction from its stale view. The local view
// alone says "absent" (what a barrier-less check would destroy on); the
// confirmation waits for the barrier, keeps while it cannot pass, and after
// catching up sees the topic and keeps.
func TestTopicGoneWaitsForLaggingStateMachine(t *testing.T) {
	t.Parallel()
	s := fake.NewMetaStore()
	s.HoldApply()
	if _, err := s.Commit(createEntry("orders", 1)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Topic("orders"); ok {
		t.Fatal("setup: the lagging replica already shows the topic")
	}
	c := leaderconfirm.New(s)
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if d := c.TopicGone(short, "orders", ""); d.Destroy {
		t.Fatalf("confirmed destruction from a lagging state machine: %+v", d)
	}
	done := make(chan leaderconfirm.Decision, 1)
	go func() { done <- c.TopicGone(context.Background(), "orders", "") }()
	select {
	case d := <-done:
		t.Fatalf("confirmation answered before the state machine caught up: %+v", d)
	case <-time.After(20 * time.Millisecond):
	}
	if err := s.ReleaseApply(); err != nil {
		t.Fatal(err)
	}
	if d := <-done; d.Destroy || d.Reason != "topic present" {
		t.Fatalf("after catching up: %+v", d)
	}
}

// Ensure that a local copy is reclaimable only when the confirmed row names
// another node as owner and not this node as target.
func TestNotOwner(t *testing.T) {
	t.Parallel()
	s := fake.NewMetaStore()
	createTopic(t, s, "t", 1)
	id := topicID(1)
	propose(t, s, &meta.AssignPartitionIfAbsent{Topic: "t", TopicID: id, Partition: 0, Owner: "n1"})
	propose(t, s, &meta.AssignPartitionIfAbsent{Topic: "t", TopicID: id, Partition: 1, Owner: "n2"})
	propose(t, s, &meta.SetAssignmentTarget{Topic: "t", Partition: 1, Target: "n1"})
	propose(t, s, &meta.AssignPartitionIfAbsent{Topic: "t", TopicID: id, Partition: 2, Owner: "n2"})
	c := leaderconfirm.New(s)
	ref := func(p int32, tid string) domain.PartitionRef {
		return domain.PartitionRef{Topic: "t", TopicID: domain.TopicID(tid), Partition: p}
	}
	cases := []struct {
		name        string
		ref         domain.PartitionRef
		wantDestroy bool
	}{
		{"owner_is_self", ref(0, id), false},
		{"target_is_self", ref(1, id), false},
		{"owned_elsewhere", ref(2, id), true},
		{"other_incarnation", ref(0, topicID(5)), true},
	}
	for _, tc := range cases {
		if d := c.NotOwner(context.Background(), tc.ref, "n1"); d.Destroy != tc.wantDestroy {
			t.Errorf("%s: %+v", tc.name, d)
		}
	}
	propose(t, s, &meta.UpdateTopic{Name: "t", Partitions: 4})
	if d := c.NotOwner(context.Background(), ref(3, id), "n1"); d.Destroy {
		t.Fatalf("unplaced partition confirmed: %+v", d)
	}
}

// Ensure that cursor state is removable only once its link is dissolved or
// re-attached at another epoch.
func TestLinkGone(t *testing.T) {
	t.Parallel()
	s := fake.NewMetaStore()
	createTopic(t, s, "p", 1)
	createTopic(t, s, "c", 2)
	epoch := topicID(77)
	propose(t, s, &meta.AttachChild{Parent: "p", Child: "c", Epoch: epoch})
	c := leaderconfirm.New(s)
	ctx := context.Background()
	if d := c.LinkGone(ctx, "p", "c", epoch); d.Destroy {
		t.Fatalf("live link: %+v", d)
	}
	if d := c.LinkGone(ctx, "p", "c", topicID(78)); !d.Destroy {
		t.Fatalf("old epoch: %+v", d)
	}
	propose(t, s, &meta.DetachChild{Parent: "p", Child: "c"})
	if d := c.LinkGone(ctx, "p", "c", epoch); !d.Destroy {
		t.Fatalf("dissolved link: %+v", d)
	}
}

// Ensure that a cursor may anchor only on the confirmed live link at its
// own epoch, and that a failed barrier never authorizes it (§6.3).
func TestLinkLive(t *testing.T) {
	t.Parallel()
	s := fake.NewMetaStore()
	createTopic(t, s, "p", 1)
	createTopic(t, s, "c", 2)
	epoch := topicID(77)
	c := leaderconfirm.New(s)
	ctx := context.Background()
	if d := c.LinkLive(ctx, "p", "c", epoch); d.Destroy {
		t.Fatalf("before attach: %+v", d)
	}
	propose(t, s, &meta.AttachChild{Parent: "p", Child: "c", Epoch: epoch})
	if d := c.LinkLive(ctx, "p", "c", epoch); !d.Destroy {
		t.Fatalf("live link: %+v", d)
	}
	if d := c.LinkLive(ctx, "p", "c", topicID(78)); d.Destroy {
		t.Fatalf("other epoch: %+v", d)
	}
	if d := c.LinkLive(ctx, "q", "c", epoch); d.Destroy {
		t.Fatalf("other parent: %+v", d)
	}
	s.FailBarrier(meta.ErrUnavailable)
	if d := c.LinkLive(ctx, "p", "c", epoch); d.Destroy || d.Err == nil {
		t.Fatalf("failed barrier: %+v", d)
	}
}

// Ensure that constructors reject nil dependencies.
func TestNewRejectsNil(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]func(){
		"confirmer": func() { leaderconfirm.New(nil) },
		"latch":     func() { leaderconfirm.NewLatch(nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic on nil", name)
				}
			}()
			f()
		}()
	}
}
