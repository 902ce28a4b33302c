package meta_test

import (
	"testing"

	"github.com/narad/narad/domain/meta"
)

// ensure that each entry moves exactly the views whose rows it changes, and
// that a heartbeat restamping a live member moves none: the idle cluster's
// background passes key on these counters (internals §6.1, §8).
func TestViewsChangedByEachEntry(t *testing.T) {
	kv := meta.NewMemKV()
	index := uint64(0)
	step := func(ev meta.Event, atMs int64) meta.Views {
		t.Helper()
		index++
		_, ms, err := meta.Step(kv, index, meta.Envelope{Actor: "a", AtMs: atMs, Event: ev}, meta.JournalKeep)
		if err != nil {
			t.Fatal(err)
		}
		got, err := meta.ViewsChanged(kv, ms)
		if err != nil {
			t.Fatal(err)
		}
		if err := meta.WriteMutations(kv, ms); err != nil {
			t.Fatal(err)
		}
		return got
	}
	routing := meta.Views(0).With(meta.ViewRouting).With(meta.ViewPlacement)
	cases := []struct {
		name string
		ev   meta.Event
		want meta.Views
	}{
		{"join", &meta.MemberJoin{ID: "n1", Addr: "n1:7942", ClusterAddr: "n1:7943"}, routing},
		{"heartbeat restamps", &meta.MemberHeartbeat{ID: "n1"}, 0},
		{"heartbeat of a stranger is refused", &meta.MemberHeartbeat{ID: "ghost"}, 0},
		{"drain", &meta.SetMemberDraining{ID: "n1", Draining: true}, meta.Views(0).With(meta.ViewPlacement)},
		{"drain again changes nothing", &meta.SetMemberDraining{ID: "n1", Draining: true}, 0},
		{"dead", &meta.MemberDead{ID: "n1"}, routing},
		{"rejoin revives", &meta.MemberJoin{ID: "n1", Addr: "n1:7942", ClusterAddr: "n1:7943"}, routing},
		{"create topic", &meta.CreateTopic{Name: "orders", ID: "00000000000000a1", Partitions: 2, RetentionMs: 1000, VisibilityTimeoutMs: 30000, MaxInFlight: 1024, MaxAckedAhead: 1024}, meta.Views(0).With(meta.ViewTopics)},
		{"assign", &meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: "00000000000000a1", Partition: 0, Owner: "n1"}, meta.Views(0).With(meta.ViewAssignments)},
		{"assign again is refused", &meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: "00000000000000a1", Partition: 0, Owner: "n1"}, 0},
		{"user", &meta.CreateUser{Username: "u", PasswordHash: []byte("h")}, meta.Views(0).With(meta.ViewUsers)},
		{"remove member tombstones", &meta.RemoveMember{ID: "n1"}, routing},
	}
	for i, c := range cases {
		if got := step(c.ev, int64(i+1)*1000); got != c.want {
			t.Errorf("%s: views %b, want %b", c.name, got, c.want)
		}
	}
}

// ensure that Bump and Moved agree: a pass that remembers the versions it
// read sees a later bump only in the views it watches.
func TestVersionsMoveOnlyInTheirViews(t *testing.T) {
	var v meta.Versions
	seen := v
	watch := meta.Views(0).With(meta.ViewTopics).With(meta.ViewAssignments)
	v = v.Bump(meta.Views(0).With(meta.ViewUsers))
	if v.Moved(seen, watch) {
		t.Fatal("a users change moved the topic watch")
	}
	if !v.Moved(seen, meta.AllViews) || v.Of(meta.ViewUsers) != 1 {
		t.Fatalf("users counter %d, want 1 and visible to a full watch", v.Of(meta.ViewUsers))
	}
	v = v.Bump(meta.AllViews)
	if !v.Moved(seen, watch) || v.Of(meta.ViewTopics) != 1 || v.Of(meta.ViewUsers) != 2 {
		t.Fatalf("after a full bump: %v", v)
	}
}
