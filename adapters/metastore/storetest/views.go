package storetest

import (
	"testing"

	"github.com/narad/narad/domain/meta"
)

func testEveryView(t *testing.T, s Store) {
	at := int64(1_700_000_000_000)
	envs := []meta.Event{
		&meta.MemberJoin{ID: "n1", Addr: "127.0.0.1:7942", ClusterAddr: "127.0.0.1:7943"},
		&meta.MemberJoin{ID: "n2", Addr: "127.0.0.2:7942", ClusterAddr: "127.0.0.2:7943"},
		&meta.RemoveMember{ID: "n2"},
		&meta.CreateTopic{Name: "p", ID: TopicID(1), Partitions: 2, VisibilityTimeoutMs: 1},
		&meta.CreateTopic{Name: "c", ID: TopicID(2), Partitions: 2, VisibilityTimeoutMs: 1},
		&meta.PutSchema{Topic: "p", Version: 1, Schema: []byte(`{"type":"object"}`)},
		&meta.AttachChild{Parent: "p", Child: "c", Epoch: TopicID(7), Offsets: []int64{1, 2}},
		&meta.AssignPartitionIfAbsent{Topic: "p", TopicID: TopicID(1), Partition: 1, Owner: "n1"},
		&meta.SetAssignmentTarget{Topic: "p", Partition: 1, Target: "n3"},
		&meta.CreateUser{Username: "alice", PasswordHash: []byte("h")},
		&meta.PutRemote{Name: "dr", ID: TopicID(9), URL: "https://dr.example.com", Username: "r", Salt: make([]byte, 32),
			Credential: meta.RemoteCredential{SealedPassword: []byte("s"), KeyVersion: TopicID(3), Fingerprint: "0123456789ab"},
			Limits:     meta.RemoteLimits{MaxInFlight: 1, RequestTimeoutMs: 5000, IdleConnTimeoutMs: 1000, ConnMaxAgeMs: 10000, CheckIntervalMs: 10000, Compression: "none"}},
	}
	for _, ev := range envs {
		if got := MustPropose(t, s, meta.Envelope{AtMs: at, Event: ev}); !got.Result.OK() {
			t.Fatalf("%s %s: %v", ev.Type(), ev.Subject(), got.Result)
		}
	}
	check := func(what string, ok bool, err error) {
		t.Helper()
		if err != nil || !ok {
			t.Fatalf("%s: ok=%v err=%v", what, ok, err)
		}
	}
	members, err := s.Members()
	check("members", len(members) == 1 && members[0].ID == "n1", err)
	tombs, err := s.Tombstones()
	check("tombstones", len(tombs) == 1 && tombs[0].ID == "n2", err)
	schemas, err := s.Schemas("c")
	check("adopted schema", len(schemas) == 1, err)
	links, err := s.Links()
	check("links", len(links) == 1 && links[0].Parent == "p" && links[0].Child == "c", err)
	rows, err := s.Assignments("p")
	check("assignments", len(rows) == 1 && rows[0].Owner == "n1", err)
	row, ok, err := s.Assignment("p", 1)
	check("assignment", ok && row.Target == "n3", err)
	moves, err := s.Moves()
	check("moves", len(moves) == 1 && moves[0].From == "n1" && moves[0].To == "n3", err)
	u, ok, err := s.User("alice")
	check("user", ok && string(u.PasswordHash) == "h", err)
	users, err := s.Users()
	check("users", len(users) == 1, err)
	remotes, err := s.Remotes()
	check("remotes", len(remotes) == 1 && remotes[0].CredentialVersion == 1, err)
}
