package meta_test

import (
	"testing"

	"github.com/narad/narad/domain/meta"
)

// ensure that applied heartbeats stay out of the history (they would push
// every change out of it within hours) while a refused one and every other
// entry are recorded.
func TestJournalLeavesAppliedHeartbeatsOut(t *testing.T) {
	kv := meta.NewMemKV()
	step := func(index uint64, ev meta.Event) {
		t.Helper()
		_, ms, err := meta.Step(kv, index, meta.Envelope{Actor: "a", AtMs: 1, Event: ev}, meta.JournalKeep)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if m.Delete {
				_ = kv.Delete(m.Key)
			} else {
				_ = kv.Set(m.Key, m.Value)
			}
		}
	}
	step(1, &meta.MemberJoin{ID: "n1", Addr: "n1:7942", ClusterAddr: "n1:7943"})
	step(2, &meta.MemberHeartbeat{ID: "n1"})
	step(3, &meta.MemberHeartbeat{ID: "ghost"}) // refused: no such member
	step(4, &meta.CreateUser{Username: "u", PasswordHash: []byte("h")})
	got, err := meta.Journal(kv, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var indexes []uint64
	for _, e := range got {
		indexes = append(indexes, e.Index)
	}
	if len(indexes) != 3 || indexes[0] != 4 || indexes[1] != 3 || indexes[2] != 1 {
		t.Fatalf("history holds entries %v, want [4 3 1]", indexes)
	}
}
