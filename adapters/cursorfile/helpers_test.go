package cursorfile

import (
	"errors"
	"sync"
	"testing"

	"github.com/narad/narad/adapters/segmentlog"
	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

const (
	dataDir  = "/data"
	parentID = domain.TopicID("0123456789abcdef")
	otherID  = domain.TopicID("fedcba9876543210")
	epochA   = "00000000000000aa"
	epochB   = "00000000000000bb"
)

var parent = domain.PartitionRef{Topic: "orders", TopicID: parentID, Partition: 2}

// partitionFS returns a MemFS holding parent's directory, its topic's
// marker naming id, both durable.
func partitionFS(t *testing.T, id domain.TopicID) *vfs.MemFS {
	t.Helper()
	mem := vfs.NewMem()
	makePartitionDir(t, mem, dataDir, domain.PartitionRef{Topic: parent.Topic, TopicID: id, Partition: parent.Partition})
	return mem
}

// makePartitionDir lays out what adapters/segmentlog would under dir: ref's
// partition directory and its topic's marker naming ref.TopicID.
func makePartitionDir(t *testing.T, fsys vfs.FS, dir string, ref domain.PartitionRef) {
	t.Helper()
	if err := fsys.MkdirAll(segmentlog.PartitionDir(dir, ref.Topic, ref.Partition)); err != nil {
		t.Fatal(err)
	}
	if err := vfs.WriteFileAtomic(fsys, segmentlog.MarkerPath(dir, ref.Topic), []byte(ref.TopicID)); err != nil {
		t.Fatal(err)
	}
}

func newStore(t *testing.T, fsys vfs.FS) *Store {
	t.Helper()
	s, err := New(Options{FS: fsys, DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func cursorPath() string {
	return segmentlog.PartitionDir(dataDir, parent.Topic, parent.Partition) + "/fanout-audit.offset"
}

func mustStore(t *testing.T, s *Store, c ports.FanoutCursor) {
	t.Helper()
	if err := s.Store(parent, "audit", c); err != nil {
		t.Fatalf("store %+v: %v", c, err)
	}
}

func mustLoad(t *testing.T, s *Store) (ports.FanoutCursor, bool) {
	t.Helper()
	c, ok, err := s.Load(parent, "audit")
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return c, ok
}

// opLog is a vfs hook that records every operation and can fail some.
type opLog struct {
	mu  sync.Mutex
	ops []vfs.Op
	vfs.Faults
}

func (l *opLog) hook(op vfs.Op, name string) error {
	l.mu.Lock()
	l.ops = append(l.ops, op)
	l.mu.Unlock()
	return l.Faults.Hook(op, name)
}

func (l *opLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops = nil
}

func (l *opLog) count(op vfs.Op) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, o := range l.ops {
		if o == op {
			n++
		}
	}
	return n
}

// damagedReads wraps an FS so the first n reads of whole files see a
// flipped byte: a reader catching the writer mid-write.
type damagedReads struct {
	vfs.FS
	mu sync.Mutex
	n  int
}

func (d *damagedReads) Open(name string) (vfs.File, error) {
	f, err := d.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return &damagedFile{File: f, d: d}, nil
}

type damagedFile struct {
	vfs.File
	d *damagedReads
}

func (f *damagedFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if f.d.n > 0 && n > 40 {
		f.d.n--
		p[40] ^= 0x10
	}
	return n, err
}

func isCorrupt(err error) bool { return errors.Is(err, domain.ErrCursorCorrupt) }
