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

// withPeers rebuilds f's service able to ask other owners through the
// returned fake.
func withPeers(t *testing.T, f *fixture) *fake.PeerStats {
	t.Helper()
	peers := fake.NewPeerStats()
	svc, err := topics.New(f.store, f.logs, f.schema, f.clock, rand.Reader, serverDefaults, self, topics.WithPeerStats(peers))
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	return peers
}

// remoteStats are the numbers partition p's remote owner reports.
func remoteStats(p int32) ports.LogStats {
	return ports.LogStats{Segments: 2, SizeBytes: 100 + int64(p), OldestOffset: int64(p), NextOffset: 50 + int64(p),
		HighWatermark: 40 + int64(p), OldestSegmentAt: time.Unix(1_700_000_000+int64(p), 0)}
}

// serveRemote makes every remote owner of tp answer remoteStats.
func serveRemote(t *testing.T, f *fixture, peers *fake.PeerStats, tp meta.Topic) map[int32]string {
	t.Helper()
	own := owners(t, f, tp.Name)
	for p, o := range own {
		if o != self {
			peers.Set(o, domain.PartitionRef{Topic: tp.Name, TopicID: domain.TopicID(tp.ID), Partition: p}, remoteStats(p))
		}
	}
	return own
}

// Ensure that partitions of other live owners carry their owners' numbers
// with status ok, asked once per owner for all its partitions in index
// order, for the topic's incarnation, within the 2 s owner budget, so a
// healthy spread topic is not partial (api.md §2.7; internals.md §6.6,
// §10.4; conformance 47, 48).
func TestDescribeAsksEachRemoteOwnerOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, self, "n2", "n3")
	peers := withPeers(t, f)
	tp := f.create(t, topics.CreateRequest{Caller: anyone, Name: "spread", Partitions: 7})
	own := serveRemote(t, f, peers, tp)
	d := f.describe(t, "spread")
	latest := time.Now().Add(2 * time.Second) // no call started after now
	if d.Partial || len(d.Stats) != 7 {
		t.Fatalf("describe: %+v", d)
	}
	wantParts := map[string][]int32{}
	for i, st := range d.Stats {
		p := int32(i)
		want := topics.PartitionStats{Index: p, OwnerNode: own[p], Status: topics.StatusOK}
		if own[p] != self {
			ls := remoteStats(p)
			want.Segments, want.SizeBytes, want.OldestOffset, want.NextOffset, want.HighWatermark, want.OldestSegmentAt =
				ls.Segments, ls.SizeBytes, ls.OldestOffset, ls.NextOffset, ls.HighWatermark, ls.OldestSegmentAt.Unix()
			wantParts[own[p]] = append(wantParts[own[p]], p)
		}
		if st != want {
			t.Fatalf("partition %d: %+v, want %+v", i, st, want)
		}
	}
	calls := peers.Calls()
	if len(calls) != len(wantParts) || len(wantParts) != 2 {
		t.Fatalf("%d calls %+v, want one per remote owner %v", len(calls), calls, wantParts)
	}
	for _, c := range calls {
		if c.Topic != "spread" || c.ID != domain.TopicID(tp.ID) || !reflect.DeepEqual(c.Parts, wantParts[c.Node]) {
			t.Fatalf("call %+v, want %s's partitions %v of incarnation %s", c, c.Node, wantParts[c.Node], tp.ID)
		}
		if c.Deadline.IsZero() || c.Deadline.After(latest) {
			t.Fatalf("call to %s had deadline %v, want within 2 s of its start", c.Node, c.Deadline)
		}
	}
}

// Ensure that an owner that cannot report (a transport failure, a refusal
// such as another incarnation or a partition it no longer owns) leaves its
// entries as "unreachable" placeholders and the answer partial, while the
// other owners' entries stay ok (api.md §2.4, §2.7).
func TestDescribeRemoteFailuresArePlaceholders(t *testing.T) {
	t.Parallel()
	for name, breakOwner := range map[string]func(p *fake.PeerStats, owner string, tp meta.Topic){
		"transport_failure": func(p *fake.PeerStats, owner string, _ meta.Topic) { p.Fail(owner, nil) },
		"other_incarnation": func(p *fake.PeerStats, owner string, tp meta.Topic) {
			p.Set(owner, domain.PartitionRef{Topic: tp.Name, TopicID: "ffffffffffffffff", Partition: 1}, ports.LogStats{})
		},
		"not_owner_any_more": func(p *fake.PeerStats, owner string, _ meta.Topic) { p.Fail(owner, domain.ErrNotOwner) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, self, "n2", "n3")
			peers := withPeers(t, f)
			tp := f.create(t, topics.CreateRequest{Caller: anyone, Name: "spread", Partitions: 3})
			own := serveRemote(t, f, peers, tp)
			broken := own[1]
			if broken == self || own[2] == self || own[2] == broken {
				t.Fatalf("placement %v: want p1 and p2 on two other nodes", own)
			}
			breakOwner(peers, broken, tp)
			d := f.describe(t, "spread")
			if !d.Partial {
				t.Fatalf("not partial: %+v", d)
			}
			if st := d.Stats[1]; st.Status != topics.StatusOwnerUnavailable || st.OwnerLiveness != topics.LivenessUnreachable ||
				st.OwnerNode != broken || st.HighWatermark != 0 {
				t.Fatalf("broken owner's partition: %v", st)
			}
			if st := d.Stats[2]; st.Status != topics.StatusOK || st.HighWatermark != remoteStats(2).HighWatermark {
				t.Fatalf("healthy owner's partition: %v", st)
			}
		})
	}
}

// Ensure that owners that cannot answer are never asked: a dead owner's
// partition says "dead", an owner without a member record "unknown", an
// unplaced partition "unassigned" (api.md §2.4 owner_liveness).
func TestDescribeAsksNoDeadOrUnknownOwner(t *testing.T) {
	t.Parallel()
	f := newFixture(t, self, "n2", "n3")
	peers := withPeers(t, f)
	tp := f.create(t, topics.CreateRequest{Caller: anyone, Name: "spread", Partitions: 3})
	own := serveRemote(t, f, peers, tp)
	f.propose(t, &meta.MarkMemberDeadIf{ID: own[2], Heartbeat: startTime.Unix()})
	f.propose(t, &meta.UpdateTopicIf{UpdateTopic: meta.UpdateTopic{Name: "spread", Partitions: 5, RetentionMs: tp.RetentionMs,
		MaxInFlight: tp.MaxInFlight, MaxAckedAhead: tp.MaxAckedAhead}, ID: tp.ID})
	f.propose(t, &meta.AssignPartitionIfAbsent{Topic: "spread", TopicID: tp.ID, Partition: 3, Owner: "ghost"})
	d := f.describe(t, "spread")
	want := []struct{ status, liveness string }{
		{topics.StatusOK, ""}, {topics.StatusOK, ""},
		{topics.StatusOwnerUnavailable, topics.LivenessDead},
		{topics.StatusOwnerUnavailable, topics.LivenessUnknown},
		{topics.StatusOwnerUnavailable, topics.LivenessUnassigned},
	}
	for i, w := range want {
		if st := d.Stats[i]; st.Status != w.status || st.OwnerLiveness != w.liveness {
			t.Fatalf("partition %d: %v, want %+v", i, st, w)
		}
	}
	for _, c := range peers.Calls() {
		if c.Node != own[1] {
			t.Fatalf("asked %s, which cannot answer (only %s can)", c.Node, own[1])
		}
	}
}

// Ensure that ?partition=N on another owner's partition asks that owner for
// that partition alone.
func TestDescribeOneRemotePartition(t *testing.T) {
	t.Parallel()
	f := newFixture(t, self, "n2", "n3")
	peers := withPeers(t, f)
	tp := f.create(t, topics.CreateRequest{Caller: anyone, Name: "spread", Partitions: 6})
	own := serveRemote(t, f, peers, tp)
	p := int32(0)
	for own[p] == self {
		p++
	}
	d, err := f.svc.Describe(context.Background(), topics.DescribeRequest{Caller: anyone, Name: "spread", Partition: p, HasPartition: true})
	if err != nil || d.Partial || len(d.Stats) != 1 || d.Stats[0].HighWatermark != remoteStats(p).HighWatermark {
		t.Fatalf("describe partition %d: %+v, %v", p, d, err)
	}
	if calls := peers.Calls(); len(calls) != 1 || !reflect.DeepEqual(calls[0].Parts, []int32{p}) {
		t.Fatalf("calls %+v, want one for partition %d", calls, p)
	}
}

// Ensure that at most 16 owners are asked at once and every owner is asked
// (internals.md §6.6, "16 concurrent").
func TestDescribeAsksAtMostSixteenOwnersAtOnce(t *testing.T) {
	t.Parallel()
	members := []string{self}
	for i := range 20 {
		members = append(members, fmt.Sprintf("peer%02d", i))
	}
	f := newFixture(t, members...)
	peers := withPeers(t, f)
	tp := f.create(t, topics.CreateRequest{Caller: anyone, Name: "wide", Partitions: 42})
	own := serveRemote(t, f, peers, tp)
	remote := map[string]bool{}
	for _, o := range own {
		if o != self {
			remote[o] = true
		}
	}
	if len(remote) <= 16 {
		t.Fatalf("placement %v: want more than 16 remote owners", own)
	}
	release := peers.Block()
	done := make(chan topics.Description, 1)
	go func() { done <- f.describe(t, "wide") }()
	waitUntil(t, "16 owners asked at once", func() bool { return peers.InFlight() >= 16 })
	for range 1000 { // give a 17th call every chance to start: it must not
		runtime.Gosched()
	}
	release()
	d := <-done
	if d.Partial {
		t.Fatalf("partial: %+v", d.Stats)
	}
	if most := peers.MostInFlight(); most != 16 {
		t.Fatalf("%d owners asked at once, want at most (and here exactly) 16", most)
	}
	if n := len(peers.Calls()); n != len(remote) {
		t.Fatalf("%d calls for %d remote owners", n, len(remote))
	}
}

// Ensure that a describe whose caller gives up while owners have not
// answered returns at once with placeholders, never waiting them out.
func TestDescribeCallerGivesUp(t *testing.T) {
	t.Parallel()
	f := newFixture(t, self, "n2", "n3")
	peers := withPeers(t, f)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "spread", Partitions: 3})
	release := peers.Block()
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan topics.Description, 1)
	go func() {
		d, err := f.svc.Describe(ctx, topics.DescribeRequest{Caller: anyone, Name: "spread"})
		if err != nil {
			t.Errorf("describe: %v", err)
		}
		done <- d
	}()
	waitUntil(t, "both owners asked", func() bool { return peers.InFlight() == 2 })
	cancel()
	d := <-done
	if !d.Partial {
		t.Fatalf("not partial: %+v", d)
	}
	for _, st := range d.Stats {
		if st.OwnerNode != self && st.OwnerLiveness != topics.LivenessUnreachable {
			t.Fatalf("unanswered owner's partition: %v", st)
		}
	}
}

// waitUntil polls cond until it holds or 5 s pass.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched() // polling, not synchronization
	}
}
