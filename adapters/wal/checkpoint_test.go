package wal

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

var checkpointPath = filepath.Join(testDir, checkpointFileName)

func writeCheckpointFile(t *testing.T, fsys vfs.FS, data []byte) {
	t.Helper()
	if err := fsys.MkdirAll(testDir); err != nil {
		t.Fatal(err)
	}
	if err := vfs.WriteFileAtomic(fsys, checkpointPath, data); err != nil {
		t.Fatal(err)
	}
}

func checkpointOnDisk(t *testing.T, fsys vfs.FS) uint64 {
	t.Helper()
	b, err := vfs.ReadFile(fsys, checkpointPath)
	if err != nil || len(b) != checkpointFileBytes {
		t.Fatalf("checkpoint file: %d bytes, %v", len(b), err)
	}
	return binary.BigEndian.Uint64(b)
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// ensure that a checkpoint file of any size but 8 bytes refuses the open.
func TestCheckpointWrongSizeRefusesOpen(t *testing.T) {
	for _, size := range []int{0, 7, 9, 16} {
		mem := vfs.NewMem()
		writeCheckpointFile(t, mem, make([]byte, size))
		if _, err := Open(Options{FS: mem, Dir: testDir}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("checkpoint of %d bytes: Open = %v, want ErrCorrupt", size, err)
		}
	}
}

// ensure that a checkpoint past the log's next sequence refuses the open,
// and one equal to it is accepted.
func TestCheckpointAheadRefusesOpen(t *testing.T) {
	mem := cleanImage(t, 3, 10, Options{})
	writeCheckpointFile(t, mem, u64(4))
	if _, err := Open(Options{FS: mem, Dir: testDir}); !errors.Is(err, ErrCheckpointAhead) {
		t.Fatalf("checkpoint 4 over 3 records: Open = %v, want ErrCheckpointAhead", err)
	}
	writeCheckpointFile(t, mem, u64(3))
	w := openMem(t, mem, Options{})
	if w.Checkpoint() != 3 {
		t.Fatalf("Checkpoint = %d, want 3", w.Checkpoint())
	}
}

// ensure that a fresh WAL creates its checkpoint file durably (it survives a
// machine crash right after Open) holding 0.
func TestCheckpointCreatedDurably(t *testing.T) {
	mem := vfs.NewMem()
	openMem(t, mem, Options{})
	if got := checkpointOnDisk(t, mem.Crash(vfs.CrashOptions{})); got != 0 {
		t.Fatalf("checkpoint after crash = %d, want 0", got)
	}
}

// ensure that a store is in the file at once (a process crash keeps it), is
// durable after the flush (a machine crash keeps it) and not before.
func TestCheckpointInPlaceThenFlushed(t *testing.T) {
	mem := vfs.NewMem()
	w := openMem(t, mem, Options{CheckpointFlushInterval: time.Hour})
	mustAppendN(t, w, 5, 10)
	if err := w.StoreCheckpoint(3); err != nil {
		t.Fatal(err)
	}
	if got := checkpointOnDisk(t, mem); got != 3 {
		t.Fatalf("checkpoint in the file = %d right after the store, want 3", got)
	}
	if got := checkpointOnDisk(t, mem.Crash(vfs.CrashOptions{})); got != 0 {
		t.Fatalf("checkpoint survived a machine crash before its flush: %d", got)
	}
	if err := w.FlushCheckpoint(); err != nil {
		t.Fatal(err)
	}
	img := mem.Crash(vfs.CrashOptions{})
	again := openMem(t, img, Options{})
	if again.Checkpoint() != 3 || again.DurableNext() != 5 {
		t.Fatalf("after crash: checkpoint %d next %d, want 3 and 5", again.Checkpoint(), again.DurableNext())
	}
}

// ensure that the background flusher makes a store durable within its
// interval without any other call.
func TestCheckpointBackgroundFlush(t *testing.T) {
	mem := vfs.NewMem()
	w := openMem(t, mem, Options{CheckpointFlushInterval: 5 * time.Millisecond})
	mustAppendN(t, w, 2, 10)
	if err := w.StoreCheckpoint(2); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "checkpoint durable", func() bool {
		return checkpointOnDisk(t, mem.Crash(vfs.CrashOptions{})) == 2
	})
}

// ensure that Close flushes the checkpoint and a reopen reads it back.
func TestCheckpointSurvivesClose(t *testing.T) {
	mem := vfs.NewMem()
	w := openMem(t, mem, Options{CheckpointFlushInterval: time.Hour})
	mustAppendN(t, w, 4, 10)
	if err := w.StoreCheckpoint(4); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := openMem(t, mem.Crash(vfs.CrashOptions{}), Options{}).Checkpoint(); got != 4 {
		t.Fatalf("checkpoint after Close and crash = %d, want 4", got)
	}
}

// ensure that StoreCheckpoint refuses a value past DurableNext, a value going
// backwards, and any call after Close, each with its sentinel.
func TestStoreCheckpointErrors(t *testing.T) {
	w := openMem(t, vfs.NewMem(), Options{})
	mustAppendN(t, w, 3, 10)
	if err := w.StoreCheckpoint(4); !errors.Is(err, ErrCheckpointBeyondDurable) {
		t.Fatalf("past DurableNext: %v", err)
	}
	if err := w.StoreCheckpoint(2); err != nil {
		t.Fatal(err)
	}
	if err := w.StoreCheckpoint(1); !errors.Is(err, ErrCheckpointBackwards) {
		t.Fatalf("backwards: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.StoreCheckpoint(3); !errors.Is(err, domain.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

// ensure that compaction trusts only the durable checkpoint: when the
// checkpoint's fdatasync fails, no segment is deleted.
func TestCompactionWaitsForDurableCheckpoint(t *testing.T) {
	faults := &vfs.Faults{}
	mem := vfs.NewMem()
	w := openMem(t, vfs.Inject(mem, faults.Hook), Options{SegmentSizeMaxBytes: 300, CheckpointFlushInterval: time.Hour})
	mustAppendN(t, w, 20, 40)
	before := segmentFiles(t, mem, testDir)
	if err := w.StoreCheckpoint(20); err != nil {
		t.Fatal(err)
	}
	faults.FailNext(vfs.OpSync, checkpointFileName)
	if err := w.FlushCheckpoint(); err == nil {
		t.Fatal("FlushCheckpoint succeeded over a failed fdatasync")
	}
	if after := segmentFiles(t, mem, testDir); len(after) != len(before) {
		t.Fatalf("segments %v became %v without a durable checkpoint", before, after)
	}
}
