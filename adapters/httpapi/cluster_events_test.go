package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"go.uber.org/zap"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/domain/meta"
)

// journalStub serves a fixed history, newest last in entries, as the
// journal answers it (Seq < before, newest first).
type journalStub struct {
	*fake.MetaStore
	entries []meta.JournalEntry
}

func (j journalStub) History(before uint64, limit int) ([]meta.JournalEntry, error) {
	var out []meta.JournalEntry
	for i := len(j.entries) - 1; i >= 0 && len(out) < limit; i-- {
		if before == 0 || j.entries[i].Seq < before {
			out = append(out, j.entries[i])
		}
	}
	return out, nil
}

func eventsRig(t *testing.T, entries []meta.JournalEntry) func(query string) eventsJSON {
	t.Helper()
	e := NewEngine(zap.NewNop(), ClusterRoutes(stubMembers{}, journalStub{fake.NewMetaStore(), entries}, zap.NewNop())...)
	return func(query string) eventsJSON {
		t.Helper()
		rec := serve(e, "GET", "/v1/cluster/events"+query, nil)
		var out eventsJSON
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
			t.Fatalf("%s: %d %s", query, rec.Code, rec.Body.String())
		}
		return out
	}
}

// ensure that the metadata history answers who changed what, newest first,
// in pages that follow next_before to the oldest entry, leaving heartbeats
// (which older builds recorded) out unless asked for.
func TestClusterEventsPagesTheJournal(t *testing.T) {
	var entries []meta.JournalEntry
	add := func(actor string, typ meta.EntryType, subject string, code meta.Code) {
		entries = append(entries, meta.JournalEntry{Seq: uint64(len(entries)), Index: uint64(len(entries) + 10),
			AtMs: 1_700_000_000_000, Actor: actor, Type: typ, Subject: subject, Code: code})
	}
	add("node:n1", meta.TypeMemberJoin, "member n1", meta.CodeOK)
	for i := range 5 {
		add("alice", meta.TypeCreateUser, fmt.Sprintf("user u%d", i), meta.CodeOK)
		add("node:n1", meta.TypeMemberHeartbeat, "member n1", meta.CodeOK)
	}
	add("bob", meta.TypeCreateUser, "user u0", meta.CodeExists)
	get := eventsRig(t, entries)

	first := get("?limit=4")
	if len(first.Events) != 4 || first.NextBefore == 0 {
		t.Fatalf("first page %+v", first)
	}
	newest := first.Events[0]
	if newest.Actor != "bob" || newest.Type != "CreateUser" || newest.Subject != "user u0" || newest.Result != "exists" || newest.At != "2023-11-14T22:13:20Z" {
		t.Fatalf("newest %+v", newest)
	}
	var all []eventJSON
	for page := first; ; page = get(fmt.Sprintf("?limit=4&before=%d", page.NextBefore)) {
		for _, e := range page.Events {
			if e.Type == "MemberHeartbeat" {
				t.Fatalf("heartbeat listed without heartbeats=true: %+v", e)
			}
		}
		all = append(all, page.Events...)
		if page.NextBefore == 0 {
			break
		}
	}
	if len(all) != 7 || all[6].Type != "MemberJoin" {
		t.Fatalf("walked %d events: %+v", len(all), all)
	}
	if with := get("?limit=1000&heartbeats=true"); len(with.Events) != 12 || with.NextBefore != 0 {
		t.Fatalf("with heartbeats: %d events, next %d", len(with.Events), with.NextBefore)
	}
}

// ensure that bad paging parameters answer 400.
func TestClusterEventsRefusesBadQuery(t *testing.T) {
	e := NewEngine(zap.NewNop(), ClusterRoutes(stubMembers{}, fake.NewMetaStore(), zap.NewNop())...)
	for _, q := range []string{"limit=0", "limit=x", "before=-1", "heartbeats=yes", "limit=1&limit=2"} {
		if rec := serve(e, "GET", "/v1/cluster/events?"+q, nil); rec.Code != 400 {
			t.Errorf("%s: %d %s", q, rec.Code, rec.Body.String())
		}
	}
}

// ensure that the moves listing shows each move's ends and what blocks it.
func TestClusterMovesRoute(t *testing.T) {
	store := fake.NewMetaStore()
	ctx := context.Background()
	for _, ev := range []meta.Event{
		&meta.MemberJoin{ID: "n1", Addr: "n1:7942", ClusterAddr: "n1:7943"},
		&meta.CreateTopic{Name: "t", ID: "0123456789abcdef", Partitions: 3, RetentionMs: 0, VisibilityTimeoutMs: 1, MaxInFlight: 1, MaxAckedAhead: 1},
		&meta.AssignPartitionIfAbsent{Topic: "t", TopicID: "0123456789abcdef", Partition: 1, Owner: "n1"},
		&meta.SetAssignmentTarget{Topic: "t", Partition: 1, Target: "n9"},
	} {
		if got, err := store.Propose(ctx, meta.Envelope{AtMs: 1, Event: ev}); err != nil || !got.Result.OK() {
			t.Fatalf("%T: %+v %v", ev, got, err)
		}
	}
	e := NewEngine(zap.NewNop(), ClusterRoutes(stubMembers{}, store, zap.NewNop())...)
	rec := serve(e, "GET", "/v1/cluster/moves", nil)
	want := `{"moves":[{"topic":"t","partition":1,"from":"n1","to":"n9","from_status":"alive","to_status":"not_a_member","blocked":"target_not_member"}]}` + "\n"
	if rec.Code != 200 || rec.Body.String() != want {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
}
