package segmentlog

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// Ensure that the listing names a topic's directory with its marker and a
// quarantine with the topic and incarnation its name carries (internals.md
// §4.1), and that a reclaim removes each from disk.
func TestTopicDirsListAndReclaim(t *testing.T) {
	mem := vfs.NewMem()
	opts := testOptions(mem, newFakeClock())
	s := mustOpen(t, opts)
	old := testRef(0)
	mustCommit(t, s, old, batch(1, 2))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, opts)
	defer func() { _ = s.Close() }()
	live := domain.PartitionRef{Topic: old.Topic, TopicID: otherID, Partition: 0}
	mustCommit(t, s, live, batch(2, 1)) // quarantines the old directory
	dirs, err := s.TopicDirs()
	if err != nil {
		t.Fatal(err)
	}
	qdir := old.Topic + staleDirInfix + string(testID)
	var size int64
	var walk func(string)
	walk = func(p string) {
		fi, err := mem.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.IsDir() {
			size += fi.Size()
			return
		}
		names, _ := mem.List(p)
		for _, n := range names {
			walk(filepath.Join(p, n))
		}
	}
	walk(filepath.Join("/data", topicsDirName, qdir))
	if size == 0 {
		t.Fatal("the quarantine holds nothing: the size check reads nothing")
	}
	want := fmt.Sprint([]ports.TopicDir{
		{Dir: old.Topic, Topic: old.Topic, ID: otherID, Marker: otherID},
		{Dir: qdir, Topic: old.Topic, ID: testID, Marker: testID, Quarantine: true, Bytes: size},
	})
	if fmt.Sprint(dirs) != want {
		t.Fatalf("listing %v, want %v", dirs, want)
	}
	if err := s.ReclaimTopicDir(dirs[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Stat(filepath.Join("/data", topicsDirName, dirs[1].Dir)); err == nil {
		t.Fatal("the quarantine is still on disk")
	}
	// The live topic's log is open: its directory is refused.
	err = s.ReclaimTopicDir(dirs[0])
	if !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("reclaim of an open topic: %v, want ErrConflict", err)
	}
}

// Ensure that a directory whose marker changed since the listing is not
// reclaimed, and that one whose logs are closed is, after which the topic
// opens fresh.
func TestReclaimTopicDirChecksTheMarker(t *testing.T) {
	mem := vfs.NewMem()
	opts := testOptions(mem, newFakeClock())
	s := mustOpen(t, opts)
	ref := testRef(1)
	mustCommit(t, s, ref, batch(1, 3))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, opts)
	defer func() { _ = s.Close() }()
	seen := ports.TopicDir{Dir: ref.Topic, Topic: ref.Topic, ID: otherID, Marker: otherID}
	if err := s.ReclaimTopicDir(seen); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("reclaim with a stale marker: %v, want ErrConflict", err)
	}
	seen.ID, seen.Marker = testID, testID
	if err := s.ReclaimTopicDir(seen); err != nil {
		t.Fatal(err)
	}
	if first := mustCommit(t, s, ref, batch(2, 1)); first != 0 {
		t.Fatalf("first commit after the reclaim at %d, want 0", first)
	}
}

// Ensure that only well-formed quarantine names parse.
func TestParseQuarantine(t *testing.T) {
	for dir, want := range map[string]string{
		"orders.stale-0123456789abcdef":   "orders 0123456789abcdef true",
		"orders.stale-0123456789abcdef-2": "orders 0123456789abcdef true",
		"a.b.stale-unknown":               "a.b  true",
		"orders.stale-xyz":                "  false",
		".stale-0123456789abcdef":         "  false",
		"orders":                          "  false",
	} {
		topic, id, ok := parseQuarantine(dir)
		if got := fmt.Sprint(topic, " ", id, " ", ok); got != want {
			t.Errorf("%s: %q, want %q", dir, got, want)
		}
	}
}
