package offsetstore

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/ports"
)

// ensure that a partition with no directory or no files loads as no progress.
func TestLoadWithNothingPersisted(t *testing.T) {
	t.Parallel()
	mem := vfs.NewMem()
	s := newStore(t, mem)
	ref := refOf("orders", idA, 0)
	if got := mustLoad(t, s, ref); !sameOffsets(got, ports.NoOffsets) {
		t.Fatalf("no directory: %+v", got)
	}
	makePartition(t, mem, ref)
	if got := mustLoad(t, s, ref); !sameOffsets(got, ports.NoOffsets) {
		t.Fatalf("empty directory: %+v", got)
	}
}

// ensure that a write without a sync survives a process crash (the page
// cache keeps it) but not a machine crash, which recovers the last sync.
func TestWriteSurvivesProcessCrashSyncSurvivesMachineCrash(t *testing.T) {
	t.Parallel()
	mem := vfs.NewMem()
	ref := refOf("orders", idA, 0)
	makePartition(t, mem, ref)
	s := newStore(t, mem)
	must(t, s.Write(ref, offsets(3, 5)))
	must(t, s.Sync(ref))
	must(t, s.Write(ref, offsets(7, 9, 11)))

	if got := mustLoad(t, newStore(t, mem), ref); !sameOffsets(got, offsets(7, 9, 11)) {
		t.Fatalf("process crash: %+v", got)
	}
	if got := mustLoad(t, newStore(t, mem.Crash(vfs.CrashOptions{})), ref); !sameOffsets(got, offsets(3, 5)) {
		t.Fatalf("machine crash: %+v", got)
	}
}

// ensure that a window torn by power loss fails its checksum and recovery
// falls back to the anchor.
func TestTornWindowFallsBackToAnchor(t *testing.T) {
	t.Parallel()
	mem := vfs.NewMem()
	ref := refOf("orders", idA, 0)
	dir := makePartition(t, mem, ref)
	s := newStore(t, mem)
	must(t, s.Write(ref, offsets(1)))
	must(t, s.Sync(ref))
	must(t, s.Write(ref, offsets(4, 6)))
	must(t, s.Sync(ref)) // anchor: {4, 6}
	must(t, s.Write(ref, offsets(9)))
	must(t, s.Sync(ref)) // anchor {9}; the window slot holds {4, 6}

	window := int64(1-s.parts[ref].anchor) * slotBytes
	full := make([]byte, slotBytes)
	encodeSlot(full, record{seq: s.parts[ref].anchorSeq + 1, offsets: offsets(12)})
	torn := append(full[:slotBytes/2:slotBytes/2], make([]byte, slotBytes/2)...) // half a new record over zeros
	f, err := mem.OpenRW(filepath.Join(dir, aheadFileName))
	must(t, err)
	_, err = f.WriteAt(torn, window)
	must(t, err)
	must(t, f.Sync())
	must(t, f.Close())
	if got := mustLoad(t, newStore(t, mem), ref); !sameOffsets(got, offsets(9)) {
		t.Fatalf("torn window: %+v", got)
	}
	must(t, vfs.FlipBit(mem, filepath.Join(dir, aheadFileName), window+100, 3))
	if got := mustLoad(t, newStore(t, mem), ref); !sameOffsets(got, offsets(9)) {
		t.Fatalf("flipped window: %+v", got)
	}
}

// ensure that priming makes a slot that lived only in a crashed process's
// page cache durable before the first window write overwrites the other
// slot: a machine crash after the restart never goes back past it.
func TestPrimingMakesTheNewestSlotDurable(t *testing.T) {
	t.Parallel()
	mem := vfs.NewMem()
	ref := refOf("orders", idA, 2)
	makePartition(t, mem, ref)
	first := newStore(t, mem)
	must(t, first.Write(ref, offsets(10)))
	must(t, first.Sync(ref))
	must(t, first.Write(ref, offsets(20))) // page cache only; the process dies

	second := newStore(t, mem)
	must(t, second.Write(ref, offsets(25))) // primes, then overwrites slot of {10}
	got := mustLoad(t, newStore(t, mem.Crash(vfs.CrashOptions{})), ref)
	if got.Committed < 20 {
		t.Fatalf("machine crash after restart recovered %d, below the acked 20 the restart saw", got.Committed)
	}
}

// ensure that priming syncs the partition directory even when the file
// exists: a process that created consumer.ahead and died before syncing the
// directory left an entry a machine crash may lose, and the restart's
// first sync must not be the only copy of the offsets it then acks.
func TestPrimingSyncsTheDirectoryOfAnExistingFile(t *testing.T) {
	t.Parallel()
	mem := vfs.NewMem()
	ref := refOf("orders", idA, 4)
	dir := makePartition(t, mem, ref)
	f, err := mem.Create(filepath.Join(dir, aheadFileName)) // created; the process died before the directory sync
	must(t, err)
	must(t, f.Close())
	s := newStore(t, mem)
	must(t, s.Write(ref, offsets(30)))
	must(t, s.Sync(ref))
	if got := mustLoad(t, newStore(t, mem.Crash(vfs.CrashOptions{})), ref); !sameOffsets(got, offsets(30)) {
		t.Fatalf("machine crash after an acked sync recovered %+v, want committed 30", got)
	}
}

// ensure that a partition whose directory does not exist is never created
// nor written (the partition was removed).
func TestMissingDirectoryIsNeverCreated(t *testing.T) {
	t.Parallel()
	mem := vfs.NewMem()
	s := newStore(t, mem)
	ref := refOf("gone", idA, 0)
	must(t, s.Write(ref, offsets(5)))
	must(t, s.Sync(ref))
	must(t, s.Level(ref, 5))
	if _, err := mem.Stat(filepath.Join(dataDir, topicsDirName, "gone")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("topic directory exists: %v", err)
	}
}

// ensure that a delete + recreate under the same name never lets the new
// incarnation adopt the old frontier, even when the old one is still being
// written (story F29).
func TestReplacedDirectoryIsNeverAdopted(t *testing.T) {
	t.Parallel()
	mem := vfs.NewMem()
	old, fresh := refOf("orders", idA, 0), refOf("orders", idB, 0)
	makePartition(t, mem, old)
	s := newStore(t, mem)
	must(t, s.Write(old, offsets(41)))
	must(t, s.Sync(old))

	topicDir := filepath.Join(dataDir, topicsDirName, "orders")
	must(t, mem.Rename(topicDir, topicDir+".stale-"+string(idA)))
	makePartition(t, mem, fresh)

	must(t, s.Write(old, offsets(42))) // the held descriptor follows the quarantine
	must(t, s.Sync(old))
	must(t, s.Level(old, 42))
	restarted := newStore(t, mem)
	must(t, restarted.Write(old, offsets(43))) // stranded: never primed here
	must(t, restarted.Level(old, 43))
	if got := mustLoad(t, restarted, fresh); !sameOffsets(got, ports.NoOffsets) {
		t.Fatalf("recreated topic adopted %+v", got)
	}
	if got := mustLoad(t, restarted, old); !sameOffsets(got, ports.NoOffsets) {
		t.Fatalf("the retired incarnation reads %+v through the successor's directory", got)
	}
	names, err := mem.List(filepath.Join(topicDir, "p00000"))
	must(t, err)
	if len(names) != 0 {
		t.Fatalf("files written into the successor's directory: %v", names)
	}
}

// ensure that consumer.offset is levelled and that the larger frontier of
// the two files wins, keeping only acked-ahead offsets above it.
func TestLevelAndTheLargerFrontierWins(t *testing.T) {
	t.Parallel()
	mem := vfs.NewMem()
	ref := refOf("orders", idA, 1)
	dir := makePartition(t, mem, ref)
	s := newStore(t, mem)
	must(t, s.Write(ref, offsets(5, 7, 30)))
	must(t, s.Sync(ref))
	must(t, s.Level(ref, 5))
	b, err := vfs.ReadFile(mem, filepath.Join(dir, offsetFileName))
	must(t, err)
	if decodeOffsetFile(b) != 5 {
		t.Fatalf("consumer.offset holds %v", b)
	}
	f, err := mem.OpenRW(filepath.Join(dir, offsetFileName))
	must(t, err)
	_, err = f.WriteAt(encodeOffsetFile(10), 0) // as an older build's frontier past the ahead record
	must(t, err)
	must(t, f.Close())
	if got := mustLoad(t, s, ref); !sameOffsets(got, offsets(10, 30)) {
		t.Fatalf("got %+v", got)
	}
}

// ensure that a failed sync leaves the anchor alone and that the next write
// and sync recover.
func TestFailedSyncKeepsTheAnchor(t *testing.T) {
	t.Parallel()
	mem := vfs.NewMem()
	faults := &vfs.Faults{}
	fsys := vfs.Inject(mem, faults.Hook)
	ref := refOf("orders", idA, 0)
	makePartition(t, mem, ref)
	s := newStore(t, fsys)
	must(t, s.Write(ref, offsets(2)))
	must(t, s.Sync(ref))
	must(t, s.Write(ref, offsets(6)))
	faults.FailNext(vfs.OpSync, aheadFileName)
	if err := s.Sync(ref); err == nil {
		t.Fatal("injected sync failure not reported")
	}
	if got := mustLoad(t, newStore(t, mem.Crash(vfs.CrashOptions{})), ref); !sameOffsets(got, offsets(2)) {
		t.Fatalf("after a failed sync: %+v", got)
	}
	must(t, s.Write(ref, offsets(6)))
	must(t, s.Sync(ref))
	if got := mustLoad(t, newStore(t, mem.Crash(vfs.CrashOptions{})), ref); !sameOffsets(got, offsets(6)) {
		t.Fatalf("after the retry: %+v", got)
	}
}

// ensure that descriptors past the cap are closed once durable and that
// writes reopen them by path.
func TestDescriptorCap(t *testing.T) {
	t.Parallel()
	mem := vfs.NewMem()
	s, err := New(Options{FS: mem, DataDir: dataDir, MaxHeld: 2})
	must(t, err)
	defer s.Close()
	for round := int64(0); round < 3; round++ {
		for p := int32(0); p < 5; p++ {
			ref := refOf("orders", idA, p)
			makePartition(t, mem, ref)
			must(t, s.Write(ref, offsets(round*10+int64(p))))
			must(t, s.Sync(ref))
		}
	}
	if s.held > 2 {
		t.Fatalf("%d descriptors held, cap 2", s.held)
	}
	for p := int32(0); p < 5; p++ {
		if got := mustLoad(t, s, refOf("orders", idA, p)); got.Committed != 20+int64(p) {
			t.Fatalf("partition %d: %+v", p, got)
		}
	}
}

// ensure that a closed store refuses writes.
func TestClosedStoreRefuses(t *testing.T) {
	t.Parallel()
	mem := vfs.NewMem()
	s := newStore(t, mem)
	must(t, s.Close())
	if err := s.Write(refOf("orders", idA, 0), offsets(1)); err == nil {
		t.Fatal("write after close accepted")
	}
}
