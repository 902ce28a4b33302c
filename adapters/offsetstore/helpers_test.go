package offsetstore

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

const (
	dataDir = "/data"
	idA     = domain.TopicID("00000000000000aa")
	idB     = domain.TopicID("00000000000000bb")
)

// segmentlog's layout, spelled out here so the tests pin the on-disk format
// independently of adapters/partdir.
const (
	topicsDirName  = "topics"
	markerFileName = "incarnation"
)

func refOf(topic string, id domain.TopicID, p int32) domain.PartitionRef {
	return domain.PartitionRef{Topic: topic, TopicID: id, Partition: p}
}

// makePartition lays out the directory segmentlog would have made for ref:
// topic directory, incarnation marker, partition directory.
func makePartition(t *testing.T, fsys vfs.FS, ref domain.PartitionRef) string {
	t.Helper()
	topicDir := filepath.Join(dataDir, topicsDirName, ref.Topic)
	if err := fsys.MkdirAll(topicDir); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Stat(filepath.Join(topicDir, markerFileName)); errors.Is(err, fs.ErrNotExist) {
		if err := vfs.WriteFileAtomic(fsys, filepath.Join(topicDir, markerFileName), []byte(ref.TopicID)); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(topicDir, "p"+pad5(ref.Partition))
	if err := fsys.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func pad5(p int32) string {
	s := []byte("00000")
	for i := 4; i >= 0 && p > 0; i-- {
		s[i] = byte('0' + p%10)
		p /= 10
	}
	return string(s)
}

func newStore(t *testing.T, fsys vfs.FS) *Store {
	t.Helper()
	s, err := New(Options{FS: fsys, DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func offsets(committed int64, ahead ...int64) ports.ConsumerOffsets {
	return ports.ConsumerOffsets{Committed: committed, AckedAhead: ahead}
}

func mustLoad(t *testing.T, s *Store, ref domain.PartitionRef) ports.ConsumerOffsets {
	t.Helper()
	got, err := s.Load(ref)
	if err != nil {
		t.Fatalf("load %s: %v", ref, err)
	}
	return got
}

func sameOffsets(a, b ports.ConsumerOffsets) bool {
	return a.Committed == b.Committed && slices.Equal(a.AckedAhead, b.AckedAhead)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
