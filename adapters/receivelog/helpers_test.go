package receivelog

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/deadletter"
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
	must(t, fsys.MkdirAll(topicDir))
	if _, err := fsys.Stat(filepath.Join(topicDir, markerFileName)); errors.Is(err, fs.ErrNotExist) {
		must(t, vfs.WriteFileAtomic(fsys, filepath.Join(topicDir, markerFileName), []byte(ref.TopicID)))
	}
	dir := partDir(ref)
	must(t, fsys.MkdirAll(dir))
	return dir
}

func partDir(ref domain.PartitionRef) string {
	return filepath.Join(dataDir, topicsDirName, ref.Topic, "p"+pad5(ref.Partition))
}

func receivesPath(ref domain.PartitionRef) string {
	return filepath.Join(partDir(ref), receivesFileName)
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
	must(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func count(off int64, n uint32) deadletter.Record {
	return deadletter.Record{Kind: deadletter.KindCount, Offset: off, Count: n}
}

func reason(off int64, why string) deadletter.Record {
	return deadletter.Record{Kind: deadletter.KindReason, Offset: off, Reason: why}
}

func intent(off int64, n uint32) deadletter.Record {
	return deadletter.Record{Kind: deadletter.KindIntent, Offset: off, Count: n}
}

// everyKind is a batch holding each kind with edge values.
func everyKind() []deadletter.Record {
	return []deadletter.Record{
		count(0, 1), reason(0, ""), intent(0, 1),
		count(1<<62, 1<<31), reason(127, "handler timed out"), intent(128, 5),
		count(1<<63-1, 1<<32-1), reason(1<<63-1, strings.Repeat("r", deadletter.ReasonBytesMax)),
		reason(300, "ünïcode \x00 bytes"),
	}
}

func mustLoad(t *testing.T, s *Store, ref domain.PartitionRef) []deadletter.Record {
	t.Helper()
	got, err := s.Load(ref)
	if err != nil {
		t.Fatalf("load %s: %v", ref, err)
	}
	return got
}

func wantRecords(t *testing.T, what string, got, want []deadletter.Record) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %d records %v, want %d %v", what, len(got), got, len(want), want)
	}
}

func fileSize(t *testing.T, fsys vfs.FS, name string) int64 {
	t.Helper()
	fi, err := fsys.Stat(name)
	must(t, err)
	return fi.Size()
}

func wantErr(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got %v, want %v", what, err, target)
	}
}

func wantAbsent(t *testing.T, fsys vfs.FS, name string) {
	t.Helper()
	if _, err := fsys.Stat(name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s exists (%v), want absent", name, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func concat(batches ...[]deadletter.Record) []deadletter.Record {
	var out []deadletter.Record
	for _, b := range batches {
		out = append(out, b...)
	}
	return out
}
