package metastore

import (
	"bytes"
	"testing"

	"github.com/narad/narad/domain/meta"
)

// Ensure that the pebble replica moves a view's counter only after a
// committed batch changed that view, never for a heartbeat that restamps a
// live member, and every counter on a snapshot install (internals §8).
func TestVersionsMoveWithTheViewsABatchChanged(t *testing.T) {
	s := openSM(t, t.TempDir())
	defer s.Close()
	join := env(&meta.MemberJoin{ID: "n1", Addr: "n1:7942", ClusterAddr: "n1:7943"})
	if _, err := s.Update(entries(t, 1, join, createTopic("orders", 1))); err != nil {
		t.Fatal(err)
	}
	v := s.viewVersions()
	if v.Of(meta.ViewTopics) != 1 || v.Of(meta.ViewRouting) != 1 || v.Of(meta.ViewAssignments) != 0 {
		t.Fatalf("after a join and a create: %v", v)
	}
	if _, err := s.Update(entries(t, 3, env(&meta.MemberHeartbeat{ID: "n1"}))); err != nil {
		t.Fatal(err)
	}
	if got := s.viewVersions(); got != v {
		t.Fatalf("a heartbeat moved the versions: %v -> %v", v, got)
	}
	snap := snapshotOf(t, s)
	if err := s.RecoverFromSnapshot(bytes.NewReader(snap), nil); err != nil {
		t.Fatal(err)
	}
	after := s.viewVersions()
	for view := meta.ViewTopics; view <= meta.ViewPlacement; view++ {
		if after.Of(view) != v.Of(view)+1 {
			t.Fatalf("view %d after a snapshot install: %d, want %d", view, after.Of(view), v.Of(view)+1)
		}
	}
}
