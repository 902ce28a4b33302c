package segmentlog

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

const otherID domain.TopicID = "fedcba9876543210"

// ensure that a node down through a delete and recreate quarantines the old
// directory on its next open: renamed to <name>.stale-<old id>, never served,
// the fresh directory stamped with the new id; a later ref with the old id
// is refused as stale, even after another restart (F21, 4.1). A delete and
// re-create is routine: the quarantine logs at INFO, never at ERROR
// (issue 15).
func TestStaleIncarnationIsQuarantined(t *testing.T) {
	mem := vfs.NewMem()
	opts := testOptions(mem, newFakeClock())
	var logged bytes.Buffer
	opts.Logger = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := mustOpen(t, opts)
	old := testRef(0)
	mustCommit(t, s, old, batch(1, 4))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, opts)
	live := domain.PartitionRef{Topic: old.Topic, TopicID: otherID, Partition: 0}
	wantErr(t, readErr(s, live, 0), domain.ErrOffsetNotWritten, "read of the new incarnation")
	stale := filepath.Join("/data", topicsDirName, old.Topic+staleDirInfix+string(testID))
	if _, err := mem.Stat(filepath.Join(stale, partitionDirName(0), segmentName(0))); err != nil {
		t.Fatalf("the old incarnation's segment is not in quarantine: %v", err)
	}
	marker, err := vfs.ReadFile(mem, filepath.Join("/data", topicsDirName, old.Topic, markerFileName))
	if err != nil || string(marker) != string(otherID) {
		t.Fatalf("marker %q, %v; want %s", marker, err, otherID)
	}
	if out := logged.String(); !strings.Contains(out, "level=INFO msg=\"quarantined the directory") || strings.Contains(out, "level=ERROR") {
		t.Fatalf("quarantine log: want one INFO line and no ERROR, got:\n%s", out)
	}
	if first := mustCommit(t, s, live, batch(2, 2)); first != 0 {
		t.Fatalf("new incarnation's first commit at %d", first)
	}
	_, err = s.CommitDurable(context.Background(), old, batch(3, 1))
	if !errors.Is(err, ErrStaleIncarnation) || !errors.Is(err, domain.ErrLogClosed) {
		t.Fatalf("commit with the old id: %v, want ErrStaleIncarnation", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, opts)
	defer func() { _ = s.Close() }()
	_, err = s.Read(context.Background(), old, 0, 10, 0)
	wantErr(t, err, ErrStaleIncarnation, "read with the old id after a restart")
	checkRange(t, s, live, 0, batch(2, 2))
}

// ensure that a directory without a marker (a topic older than
// incarnations) is served by name, and adopted by the first ref carrying an
// id, its data kept.
func TestLegacyDirectoryIsAdopted(t *testing.T) {
	mem := vfs.NewMem()
	s := mustOpen(t, testOptions(mem, newFakeClock()))
	defer func() { _ = s.Close() }()
	legacy := domain.PartitionRef{Topic: "old-topic", Partition: 1}
	recs := batch(1, 3)
	mustCommit(t, s, legacy, recs)
	markerPath := filepath.Join("/data", topicsDirName, legacy.Topic, markerFileName)
	if _, err := mem.Stat(markerPath); err == nil {
		t.Fatal("a ref without an id stamped a marker")
	}
	withID := legacy
	withID.TopicID = testID
	checkRange(t, s, withID, 0, recs)
	if marker, err := vfs.ReadFile(mem, markerPath); err != nil || string(marker) != string(testID) {
		t.Fatalf("marker %q, %v after adoption", marker, err)
	}
	checkRange(t, s, legacy, 0, recs) // name-based refs keep working
}

// ensure that options without a filesystem or directory, or with an
// eviction below its floor, are refused at construction.
func TestOpenRefusesBadOptions(t *testing.T) {
	mem := vfs.NewMem()
	for name, opts := range map[string]Options{
		"nil_fs":         {DataDir: "/d"},
		"no_dir":         {FS: mem},
		"eviction_floor": {FS: mem, DataDir: "/d", IdleEviction: 59e9},
		"bad_codec":      {FS: mem, DataDir: "/d", Codec: 7},
		"bad_level":      {FS: mem, DataDir: "/d", Level: 9},
	} {
		if s, err := Open(opts); !errors.Is(err, ErrInvalidOptions) {
			if s != nil {
				_ = s.Close()
			}
			t.Errorf("%s: %v, want ErrInvalidOptions", name, err)
		}
	}
}

// ensure that the exported path helpers name the directories the store
// really writes, so files kept beside a partition's log land in it.
func TestPathHelpersMatchLayout(t *testing.T) {
	t.Parallel()
	ref := domain.PartitionRef{Topic: "orders", TopicID: testID, Partition: 7}
	if got, want := PartitionDir("/data", ref.Topic, ref.Partition), partDir(ref); got != want {
		t.Fatalf("PartitionDir %q, want %q", got, want)
	}
	if got, want := MarkerPath("/data", "orders"), filepath.Join("/data", topicsDirName, "orders", markerFileName); got != want {
		t.Fatalf("MarkerPath %q, want %q", got, want)
	}
}
