package metastore

import (
	"testing"

	"github.com/narad/narad/domain/meta"
)

// ensure that cached views die with the applied index they were read at, a
// read that raced an apply is not stored, and callers own the slices they get.
func TestViewCacheFollowsTheAppliedIndex(t *testing.T) {
	var c viewCache
	k := assignKey{topic: "t", partition: 1}
	if _, ok := c.assignment(5, k); ok {
		t.Fatal("empty cache hit")
	}
	c.putAssignment(5, k, cachedAssignment{a: meta.Assignment{Owner: "n1"}, ok: true})
	if v, ok := c.assignment(5, k); !ok || v.a.Owner != "n1" {
		t.Fatalf("miss at the same index: %+v %v", v, ok)
	}
	if _, ok := c.assignment(6, k); ok {
		t.Fatal("a view of index 5 served at index 6")
	}
	c.putAssignment(5, k, cachedAssignment{a: meta.Assignment{Owner: "stale"}, ok: true})
	if _, ok := c.assignment(6, k); ok {
		t.Fatal("a read that raced an apply was stored")
	}
	c.putTopic(6, "t", cachedTopic{t: meta.Topic{Name: "t", Children: []string{"c"}}, ok: true})
	v, _ := c.topic(6, "t")
	v.t.Children[0] = "mutated"
	if w, _ := c.topic(6, "t"); w.t.Children[0] != "c" {
		t.Fatal("a caller's change reached the cache")
	}
	c.putTopic(6, "stub", cachedTopic{t: meta.Topic{Name: "stub", Remote: &meta.RemoteLink{Name: "r"}}, ok: true})
	if _, ok := c.topic(6, "stub"); ok {
		t.Fatal("a remote stub was cached")
	}
}

// ensure that the member table is cached per applied index and callers own their copy.
func TestViewCacheMembers(t *testing.T) {
	var c viewCache
	if _, ok := c.memberTable(3); ok {
		t.Fatal("empty cache hit")
	}
	c.putMembers(3, []meta.Member{{ID: "n1", Status: meta.StatusAlive}})
	ms, ok := c.memberTable(3)
	if !ok || len(ms) != 1 {
		t.Fatalf("miss: %v %v", ms, ok)
	}
	ms[0].Status = meta.StatusDead
	if again, _ := c.memberTable(3); again[0].Status != meta.StatusAlive {
		t.Fatal("a caller's change reached the cache")
	}
	if _, ok := c.memberTable(4); ok {
		t.Fatal("the member table of index 3 served at index 4")
	}
	c.putMembers(3, []meta.Member{{ID: "stale"}})
	if _, ok := c.memberTable(4); ok {
		t.Fatal("a read that raced an apply was stored")
	}
}

// ensure that a topic's assignment list is cached per applied index, a read
// that raced an apply is not stored, and callers own their copy.
func TestViewCacheTopicAssignments(t *testing.T) {
	var c viewCache
	if _, ok := c.topicAssignments(7, "t"); ok {
		t.Fatal("empty cache hit")
	}
	c.putTopicAssignments(7, "t", []meta.Assignment{{Topic: "t", Partition: 0, Owner: "n1"}})
	rows, ok := c.topicAssignments(7, "t")
	if !ok || len(rows) != 1 || rows[0].Owner != "n1" {
		t.Fatalf("miss: %v %v", rows, ok)
	}
	rows[0].Owner = "mutated"
	if again, _ := c.topicAssignments(7, "t"); again[0].Owner != "n1" {
		t.Fatal("a caller's change reached the cache")
	}
	if _, ok := c.topicAssignments(8, "t"); ok {
		t.Fatal("the rows of index 7 served at index 8")
	}
	c.putTopicAssignments(7, "t", []meta.Assignment{{Owner: "stale"}})
	if _, ok := c.topicAssignments(8, "t"); ok {
		t.Fatal("a read that raced an apply was stored")
	}
}
