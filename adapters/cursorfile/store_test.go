package cursorfile

import (
	"errors"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/segmentlog"
	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ensure that the first Store writes the fixed record through a temp file
// and a rename, and later ones advance it in place with one write and one
// sync, no rename (§6.5).
func TestStoreFirstByRenameThenInPlace(t *testing.T) {
	t.Parallel()
	mem := partitionFS(t, parentID)
	ops := &opLog{}
	s := newStore(t, vfs.Inject(mem, ops.hook))
	mustStore(t, s, ports.FanoutCursor{Epoch: epochA, NextOffset: 5})
	if ops.count(vfs.OpRename) != 1 || ops.count(vfs.OpSyncDir) != 1 {
		t.Fatalf("first store: %d renames, %d dir syncs", ops.count(vfs.OpRename), ops.count(vfs.OpSyncDir))
	}
	ops.reset()
	mustStore(t, s, ports.FanoutCursor{Epoch: epochA, NextOffset: 9})
	if ops.count(vfs.OpRename) != 0 || ops.count(vfs.OpCreate) != 0 || ops.count(vfs.OpWrite) != 1 || ops.count(vfs.OpSync) != 1 {
		t.Fatalf("advance: renames %d creates %d writes %d syncs %d", ops.count(vfs.OpRename), ops.count(vfs.OpCreate), ops.count(vfs.OpWrite), ops.count(vfs.OpSync))
	}
	b, err := vfs.ReadFile(mem, cursorPath())
	if err != nil || len(b) != recordBytes {
		t.Fatalf("file: %d bytes, %v", len(b), err)
	}
	want, _ := encode(ports.FanoutCursor{Epoch: epochA, NextOffset: 9})
	if string(b) != string(want) {
		t.Fatalf("file %q, want %q", b, want)
	}
	if c, ok := mustLoad(t, s); !ok || c != (ports.FanoutCursor{Epoch: epochA, NextOffset: 9}) {
		t.Fatalf("load %+v %v", c, ok)
	}
	if names, _ := mem.List(segmentlog.PartitionDir(dataDir, parent.Topic, parent.Partition)); len(names) != 1 {
		t.Fatalf("leftovers beside the cursor: %v", names)
	}
}

// ensure that a file in the pre-CRC format is read, and the next Store
// replaces it whole with the fixed record (migration, §6.5).
func TestOldFormatMigrates(t *testing.T) {
	t.Parallel()
	mem := partitionFS(t, parentID)
	if err := vfs.WriteFileAtomic(mem, cursorPath(), []byte(`{"epoch":"`+epochA+`","next_offset":12}`)); err != nil {
		t.Fatal(err)
	}
	s := newStore(t, mem)
	if c, ok := mustLoad(t, s); !ok || c != (ports.FanoutCursor{Epoch: epochA, NextOffset: 12}) {
		t.Fatalf("old format read as %+v %v", c, ok)
	}
	mustStore(t, s, ports.FanoutCursor{Epoch: epochA, NextOffset: 13})
	b, _ := vfs.ReadFile(mem, cursorPath())
	if len(b) != recordBytes || !strings.HasPrefix(string(b), crcPrefix) {
		t.Fatalf("not migrated: %q", b)
	}
}

// ensure that an epoch too long to pad is stored unpadded through a
// rename every time, and reads back.
func TestLongEpochStoredWhole(t *testing.T) {
	t.Parallel()
	mem := partitionFS(t, parentID)
	ops := &opLog{}
	s := newStore(t, vfs.Inject(mem, ops.hook))
	long := strings.Repeat("e", 400)
	for next := int64(1); next <= 2; next++ {
		ops.reset()
		mustStore(t, s, ports.FanoutCursor{Epoch: long, NextOffset: next})
		if ops.count(vfs.OpRename) != 1 {
			t.Fatalf("store %d: %d renames", next, ops.count(vfs.OpRename))
		}
	}
	if c, ok := mustLoad(t, s); !ok || c.Epoch != long || c.NextOffset != 2 {
		t.Fatalf("load %+v %v", c, ok)
	}
}

// ensure that a damaged or torn file is declared corrupt, while a reader
// that catches the writer mid-write gets the record on a re-read.
func TestLoadCorruptAndReread(t *testing.T) {
	t.Parallel()
	cases := map[string]func(fsys vfs.FS) error{
		"flipped_padding": func(fsys vfs.FS) error { return vfs.FlipBit(fsys, cursorPath(), 200, 3) },
		"flipped_offset":  func(fsys vfs.FS) error { return vfs.FlipBit(fsys, cursorPath(), 60, 0) },
		"torn":            func(fsys vfs.FS) error { return vfs.Tear(fsys, cursorPath(), 100) },
		"empty":           func(fsys vfs.FS) error { return vfs.Tear(fsys, cursorPath(), 0) },
		"zeroed_sector":   func(fsys vfs.FS) error { return vfs.Zero(fsys, cursorPath(), 0, recordBytes) },
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			mem := partitionFS(t, parentID)
			s := newStore(t, mem)
			mustStore(t, s, ports.FanoutCursor{Epoch: epochA, NextOffset: 7})
			if err := damage(mem); err != nil {
				t.Fatal(err)
			}
			if _, ok, err := s.Load(parent, "audit"); ok || !isCorrupt(err) {
				t.Fatalf("damaged file: ok %v err %v", ok, err)
			}
			mustStore(t, s, ports.FanoutCursor{Epoch: epochA, NextOffset: 8}) // a damaged record is overwritten whole
			if c, ok := mustLoad(t, s); !ok || c.NextOffset != 8 {
				t.Fatalf("after rewrite: %+v %v", c, ok)
			}
		})
	}
	t.Run("mid_write_reader", func(t *testing.T) {
		t.Parallel()
		mem := partitionFS(t, parentID)
		mustStore(t, newStore(t, mem), ports.FanoutCursor{Epoch: epochA, NextOffset: 7})
		flaky := &damagedReads{FS: mem, n: rereadCount}
		if c, ok := mustLoad(t, newStore(t, flaky)); !ok || c.NextOffset != 7 {
			t.Fatalf("re-read: %+v %v", c, ok)
		}
		flaky.n = rereadCount + 1
		if _, _, err := newStore(t, flaky).Load(parent, "audit"); !isCorrupt(err) {
			t.Fatalf("always damaged: %v", err)
		}
	})
}

// ensure that nothing is read from or written into a missing directory or
// one of another incarnation, and that no directory is created.
func TestForeignOrMissingDirectory(t *testing.T) {
	t.Parallel()
	for name, mem := range map[string]*vfs.MemFS{"missing": vfs.NewMem(), "other_incarnation": partitionFS(t, otherID)} {
		s := newStore(t, mem)
		if err := s.Store(parent, "audit", ports.FanoutCursor{Epoch: epochA, NextOffset: 1}); !errors.Is(err, domain.ErrPartitionDirGone) {
			t.Errorf("%s: store %v", name, err)
		}
		if _, ok, err := s.Load(parent, "audit"); ok || err != nil {
			t.Errorf("%s: load %v %v", name, ok, err)
		}
		if kids, err := s.Children(parent); len(kids) != 0 || err != nil {
			t.Errorf("%s: children %v %v", name, kids, err)
		}
		if _, err := mem.Stat(cursorPath()); err == nil {
			t.Errorf("%s: a cursor file was written", name)
		}
	}
	if _, err := vfs.NewMem().Stat(segmentlog.PartitionDir(dataDir, parent.Topic, parent.Partition)); err == nil {
		t.Fatal("setup")
	}
}

// ensure that a directory replaced by another incarnation while a cursor
// advanced stops the cursor instead of writing into the successor.
func TestReplacedDirectoryStopsAdvance(t *testing.T) {
	t.Parallel()
	mem := partitionFS(t, parentID)
	s := newStore(t, mem)
	mustStore(t, s, ports.FanoutCursor{Epoch: epochA, NextOffset: 1})
	if err := vfs.WriteFileAtomic(mem, segmentlog.MarkerPath(dataDir, parent.Topic), []byte(otherID)); err != nil {
		t.Fatal(err)
	}
	if err := s.Store(parent, "audit", ports.FanoutCursor{Epoch: epochA, NextOffset: 2}); !errors.Is(err, domain.ErrPartitionDirGone) {
		t.Fatalf("store into a replaced directory: %v", err)
	}
	b, _ := vfs.ReadFile(mem, cursorPath())
	if c, err := decode(b); err != nil || c.NextOffset != 1 {
		t.Fatalf("file changed: %+v %v", c, err)
	}
}

// ensure that Children lists only cursor files, and Remove deletes one
// durably and accepts an absent one.
func TestChildrenAndRemove(t *testing.T) {
	t.Parallel()
	mem := partitionFS(t, parentID)
	s := newStore(t, mem)
	for _, child := range []string{"zeta", "audit", "a.b-c_d"} {
		if err := s.Store(parent, child, ports.FanoutCursor{Epoch: epochA, NextOffset: 1}); err != nil {
			t.Fatal(err)
		}
	}
	dir := segmentlog.PartitionDir(dataDir, parent.Topic, parent.Partition)
	for _, junk := range []string{"fanout-x.offset.tmp", "consumer.offset", "hwm"} {
		if err := vfs.WriteFileAtomic(mem, dir+"/"+junk, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	kids, err := s.Children(parent)
	if err != nil || strings.Join(kids, ",") != "a.b-c_d,audit,zeta" {
		t.Fatalf("children %v %v", kids, err)
	}
	if err := s.Remove(parent, "audit"); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(parent, "audit"); err != nil {
		t.Fatalf("second remove: %v", err)
	}
	if _, ok := mustLoad(t, s); ok {
		t.Fatal("removed cursor still loads")
	}
	crashed := mem.Crash(vfs.CrashOptions{})
	if _, ok := mustLoad(t, newStore(t, crashed)); ok {
		t.Fatal("remove was not durable")
	}
}

// ensure that bad names and cursors are refused before any I/O.
func TestStoreRefusesInvalid(t *testing.T) {
	t.Parallel()
	s := newStore(t, partitionFS(t, parentID))
	for name, c := range map[string]ports.FanoutCursor{
		"empty_epoch": {NextOffset: 1},
		"negative":    {Epoch: epochA, NextOffset: -1},
		"huge_epoch":  {Epoch: strings.Repeat("e", epochMaxLen+1)},
	} {
		if err := s.Store(parent, "audit", c); !errors.Is(err, domain.ErrInvalidRecord) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := s.Store(parent, "../x", ports.FanoutCursor{Epoch: epochA}); !errors.Is(err, domain.ErrInvalidRecord) {
		t.Errorf("bad child name: %v", err)
	}
	if _, err := New(Options{}); err == nil {
		t.Error("New without FS")
	}
}
