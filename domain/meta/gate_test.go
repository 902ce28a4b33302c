package meta_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/narad/narad/domain/meta"
)

func member(id string, applies meta.EntryType, status string, draining bool) meta.Member {
	return meta.Member{ID: id, Status: status, Draining: draining, EntryTypes: applies}
}

func rids(ids ...string) []uint64 {
	out := make([]uint64, 0, len(ids))
	for _, id := range ids {
		out = append(out, meta.ReplicaID(id))
	}
	return out
}

// Ensure that the entry-type gate (internals §8.3 "Proposing") passes a type
// newer than the legacy set only when every server of the configuration and
// every member record applies it, counting the leader as its own build, and
// names who holds a type back.
func TestGateDecisionTable(t *testing.T) {
	t.Parallel()
	const newest = meta.AppliesThroughType
	cases := []struct {
		name        string
		selfApplies meta.EntryType
		members     []meta.Member
		servers     []uint64
		typ         meta.EntryType
		allow       bool
		holder      string // MemberID of the holder, "raft" for a record-less server
		newestAll   meta.EntryType
	}{
		{"leader_alone", newest, nil, rids("lead"), meta.TypeDeleteRemote, true, "", newest},
		{"every_member_applies", newest,
			[]meta.Member{member("lead", newest, meta.StatusAlive, false), member("n2", newest, meta.StatusAlive, false)},
			rids("lead", "n2"), meta.TypeAttachRemoteChild, true, "", newest},
		{"legacy_type_always_passes", newest,
			[]meta.Member{member("n2", 0, meta.StatusAlive, false)}, rids("lead", "n2", "n3"), meta.TypeSetUserGrants, true, "", meta.LegacyNewestType},
		{"report_less_record_is_the_legacy_set", newest,
			[]meta.Member{member("n2", 0, meta.StatusAlive, false)}, rids("lead", "n2"), meta.TypeCreateTopicWith, false, "n2", meta.LegacyNewestType},
		{"dead_member_counts", newest,
			[]meta.Member{member("n2", newest, meta.StatusAlive, false), member("n3", meta.TypeDeleteUserReleaseTopics, meta.StatusDead, false)},
			rids("lead", "n2"), meta.TypeAttachRemoteChild, false, "n3", meta.TypeDeleteUserReleaseTopics},
		{"dead_member_allows_what_it_applies", newest,
			[]meta.Member{member("n3", meta.TypeDeleteUserReleaseTopics, meta.StatusDead, false)},
			rids("lead"), meta.TypeDeleteUserReleaseTopics, true, "", meta.TypeDeleteUserReleaseTopics},
		{"draining_member_counts", newest,
			[]meta.Member{member("n2", meta.TypePruneAssignment, meta.StatusAlive, true)},
			rids("lead", "n2"), meta.TypeMarkMemberDeadIf, false, "n2", meta.TypePruneAssignment},
		{"server_without_member_record_holds_every_new_type", newest,
			[]meta.Member{member("n2", newest, meta.StatusAlive, false)},
			rids("lead", "n2", "n4"), meta.TypeCreateTopicWith, false, "raft", meta.LegacyNewestType},
		{"non_voter_without_record_holds_back_too", newest, nil,
			rids("lead", "staged"), meta.TypeUpdateTopicIf, false, "raft", meta.LegacyNewestType},
		{"leader_counts_as_its_own_release", newest,
			[]meta.Member{member("lead", 0, meta.StatusAlive, false), member("n2", newest, meta.StatusAlive, false)},
			rids("lead", "n2"), meta.TypeDeleteRemote, true, "", newest},
		{"leader_without_record_is_not_a_recordless_server", newest, nil,
			rids("lead"), meta.TypeDeleteRemote, true, "", newest},
		{"older_leader_holds_back_what_it_lacks", meta.TypeDeleteUserReleaseTopics,
			[]meta.Member{member("n2", newest, meta.StatusAlive, false)},
			rids("lead", "n2"), meta.TypeAttachRemoteChild, false, "lead", meta.TypeDeleteUserReleaseTopics},
		{"lowest_report_is_named", newest,
			[]meta.Member{member("n2", meta.TypePruneAssignment, meta.StatusAlive, false), member("n3", 0, meta.StatusAlive, false),
				member("n4", meta.TypeDeleteUserReleaseTopics, meta.StatusAlive, false)},
			rids("lead", "n2", "n3", "n4"), meta.TypeMarkMemberDeadIf, false, "n3", meta.LegacyNewestType},
		{"type_newer_than_every_build", newest, nil, rids("lead"), newest + 1, false, "lead", newest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := meta.NewGate("lead", tc.selfApplies, tc.members, tc.servers)
			ok, h := g.Allows(tc.typ)
			if ok != tc.allow {
				t.Fatalf("Allows(%s) = %v (holder %v), want %v", tc.typ, ok, h, tc.allow)
			}
			if g.Newest() != tc.newestAll {
				t.Fatalf("Newest = %d, want %d", g.Newest(), tc.newestAll)
			}
			switch {
			case tc.holder == "raft" && (h.MemberID != "" || h.ReplicaID == 0 || h.Applies != meta.LegacyNewestType):
				t.Fatalf("holder %+v, want a record-less server", h)
			case tc.holder != "raft" && h.MemberID != tc.holder:
				t.Fatalf("holder %+v, want %q", h, tc.holder)
			}
		})
	}
}

// heldBack is a gate where member n2 applies only the legacy set.
func heldBack() meta.Gate {
	return meta.NewGate("lead", meta.AppliesThroughType, []meta.Member{{ID: "n2"}}, rids("lead", "n2"))
}

// Ensure that Downgrade keeps an allowed entry, maps a held-back one to its
// legacy entries, and refuses one without a legacy form naming the holder.
func TestDowngradeMapsHeldBackTypesToLegacyEntries(t *testing.T) {
	t.Parallel()
	id, epoch := "00000000000000a1", "00000000000000e1"
	schema := []byte(`{"type":"object"}`)
	create := meta.CreateTopic{Name: "c", ID: id, Partitions: 2, VisibilityTimeoutMs: 1}
	parent := &meta.ParentSpec{Name: "p", ID: "00000000000000a2", Epoch: epoch, DelayMs: 5, Offsets: []int64{1, 2}}
	cases := []struct {
		name string
		in   meta.Event
		want []meta.Event // nil: ErrTypeHeldBack
	}{
		{"create_with_schema_and_parent", &meta.CreateTopicWith{CreateTopic: create, Schema: schema, Parent: parent},
			[]meta.Event{&create, &meta.PutSchema{Topic: "c", Version: 1, Schema: schema},
				&meta.AttachChild{Parent: "p", Child: "c", Epoch: epoch, DelayMs: 5, Offsets: []int64{1, 2}}}},
		{"create_with_nothing_more", &meta.CreateTopicWith{CreateTopic: create}, []meta.Event{&create}},
		{"update_if", &meta.UpdateTopicIf{UpdateTopic: meta.UpdateTopic{Name: "c", Partitions: 3}, ID: id},
			[]meta.Event{&meta.UpdateTopic{Name: "c", Partitions: 3}}},
		{"delete_if", &meta.DeleteTopicIf{Name: "c", ID: id}, []meta.Event{&meta.DeleteTopic{Name: "c"}}},
		{"put_schema_if", &meta.PutSchemaIf{PutSchema: meta.PutSchema{Topic: "c", Version: 2, Schema: schema}, ID: id},
			[]meta.Event{&meta.PutSchema{Topic: "c", Version: 2, Schema: schema}}},
		{"attach_if", &meta.AttachChildIf{AttachChild: meta.AttachChild{Parent: "p", Child: "c", Epoch: epoch}, ParentID: id, ChildID: id},
			[]meta.Event{&meta.AttachChild{Parent: "p", Child: "c", Epoch: epoch}}},
		{"detach_if", &meta.DetachChildIf{DetachChild: meta.DetachChild{Parent: "p", Child: "c"}, ParentID: id, ChildID: id},
			[]meta.Event{&meta.DetachChild{Parent: "p", Child: "c"}}},
		{"assign_if_absent", &meta.AssignPartitionIfAbsent{Topic: "c", TopicID: id, Partition: 1, Owner: "n1"},
			[]meta.Event{&meta.AssignPartition{Topic: "c", Partition: 1, Owner: "n1"}}},
		{"mark_dead_if", &meta.MarkMemberDeadIf{ID: "n3", Heartbeat: 9}, []meta.Event{&meta.MemberDead{ID: "n3"}}},
		{"delete_user_release_topics", &meta.DeleteUserReleaseTopics{Username: "bob"}, []meta.Event{&meta.DeleteUser{Username: "bob"}}},
		{"legacy_passes_unchanged", &meta.MemberDead{ID: "n3"}, []meta.Event{&meta.MemberDead{ID: "n3"}}},
		{"prune_has_no_legacy_form", &meta.PruneAssignment{Topic: "c", Partition: 1}, nil},
		{"remote_child_has_no_legacy_form", &meta.SetRemoteChildState{Parent: "p", Child: "c", ChildID: id, Op: meta.RemoteOpResume}, nil},
		{"remote_has_no_legacy_form", &meta.DeleteRemote{Name: "dr", ID: id}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := meta.Envelope{Actor: "alice", AtMs: 7, Event: tc.in}
			got, err := meta.Downgrade(env, heldBack())
			if tc.want == nil {
				if !errors.Is(err, meta.ErrTypeHeldBack) || !strings.Contains(err.Error(), `member "n2"`) {
					t.Fatalf("Downgrade = %v, %v; want ErrTypeHeldBack naming n2", got, err)
				}
				return
			}
			if err != nil || len(got) != len(tc.want) {
				t.Fatalf("Downgrade = %d entries, %v; want %d", len(got), err, len(tc.want))
			}
			for i, e := range got {
				if e.Actor != "alice" || e.AtMs != 7 || !reflect.DeepEqual(e.Event, tc.want[i]) {
					t.Fatalf("entry %d = %+v %#v, want %#v", i, e, e.Event, tc.want[i])
				}
				if e.Event.Type() > meta.LegacyNewestType {
					t.Fatalf("entry %d is %s, newer than the legacy set", i, e.Event.Type())
				}
			}
		})
	}
}

// Ensure that an allowed entry is proposed as it is, and that the legacy
// split of a create applies to the same views as the one entry.
func TestDowngradeAllowedAndEquivalent(t *testing.T) {
	t.Parallel()
	open := meta.NewGate("lead", meta.AppliesThroughType, nil, rids("lead"))
	env := meta.Envelope{AtMs: 1_700_000_000_000, Event: &meta.CreateTopicWith{
		CreateTopic: meta.CreateTopic{Name: "c", ID: "00000000000000a1", Partitions: 1, VisibilityTimeoutMs: 1},
		Schema:      []byte(`{"type":"object"}`)}}
	got, err := meta.Downgrade(env, open)
	if err != nil || len(got) != 1 || got[0].Event != env.Event {
		t.Fatalf("allowed entry changed: %+v, %v", got, err)
	}
	legacy, err := meta.Downgrade(env, heldBack())
	if err != nil {
		t.Fatal(err)
	}
	one, split := meta.NewMemKV(), meta.NewMemKV()
	applyAll(t, one, got)
	applyAll(t, split, legacy)
	a, _ := meta.Describe(one)
	b, _ := meta.Describe(split)
	a, b = withoutStats(a), withoutStats(b)
	if a != b {
		t.Fatalf("one entry:\n%s\nlegacy entries:\n%s", a, b)
	}
	if _, err := meta.Downgrade(meta.Envelope{}, open); !errors.Is(err, meta.ErrInvalidEvent) {
		t.Fatalf("nil event: %v", err)
	}
}

func applyAll(t *testing.T, kv *meta.MemKV, envs []meta.Envelope) {
	t.Helper()
	for _, env := range envs {
		out, err := meta.Apply(kv, env)
		if err != nil || !out.Result.OK() {
			t.Fatalf("%s: %v, %v", env.Event.Type(), out.Result, err)
		}
		if err := meta.WriteMutations(kv, out.Mutations); err != nil {
			t.Fatal(err)
		}
	}
}

// withoutStats drops the counter lines (the journal counts entries).
func withoutStats(s string) string {
	var keep []string
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "stat/") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}
