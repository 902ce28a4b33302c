package wal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// openFDs returns the targets of this process's descriptors under dir.
func openFDs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	var out []string
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(target, dir) {
			out = append(out, target)
		}
	}
	return out
}

// ensure that ReadFrom opens a segment once and reuses the descriptor across
// calls, that moving on to another segment closes the old descriptor, that
// compaction deleting a segment and Close leave no descriptor behind, and
// that reads after Close fail.
func TestReadDescriptorReusedAndReleased(t *testing.T) {
	dir := t.TempDir()
	log := &opLog{}
	w, err := Open(Options{FS: vfs.Inject(vfs.OS{}, log.hook), Dir: dir, SegmentSizeMaxBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	recs := mustAppendN(t, w, 60, 200) // several segments
	opensBefore := countOps(log.snapshot(), vfs.OpOpen)
	for i := uint64(50); i < 60; i++ {
		checkRecords(t, mustRead(t, w, i, 1), i, recs[i:i+1])
	}
	if n := countOps(log.snapshot(), vfs.OpOpen) - opensBefore; n != 1 {
		t.Fatalf("10 reads of the active segment opened it %d times, want once", n)
	}
	checkRecords(t, readAll(t, w, 0), 0, recs) // walks every segment
	if fds := segmentFDs(t, dir); len(fds) > 2 {
		t.Fatalf("after reading every segment: descriptors %v, want the writer's and one cached", fds)
	}
	if err := w.StoreCheckpoint(60); err != nil {
		t.Fatal(err)
	}
	checkRecords(t, mustRead(t, w, 0, 1), 0, recs[:1]) // cache the oldest segment
	if err := w.FlushCheckpoint(); err != nil {
		t.Fatal(err)
	}
	for _, fd := range segmentFDs(t, dir) {
		if strings.HasSuffix(fd, "(deleted)") {
			t.Fatalf("descriptor of a compacted segment kept: %s", fd)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if fds := openFDs(t, dir); len(fds) != 0 {
		t.Fatalf("descriptors left after Close: %v", fds)
	}
	if _, err := w.ReadFrom(0, 1); !errors.Is(err, domain.ErrClosed) {
		t.Fatalf("ReadFrom after Close: %v, want ErrClosed", err)
	}
}

func segmentFDs(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, fd := range openFDs(t, dir) {
		if strings.Contains(filepath.Base(fd), segmentFileSuffix) {
			out = append(out, fd)
		}
	}
	return out
}

func countOps(ops []loggedOp, op vfs.Op) int {
	n := 0
	for _, o := range ops {
		if o.op == op && filepath.Ext(o.name) == segmentFileSuffix {
			n++
		}
	}
	return n
}

func mustRead(t *testing.T, w *WAL, from uint64, limit int) []ports.WALEntry {
	t.Helper()
	got, err := w.ReadFrom(from, limit)
	if err != nil {
		t.Fatalf("ReadFrom(%d, %d): %v", from, limit, err)
	}
	return got
}

// ensure that reads racing appends, rolls, compaction and Close return
// dense, correct records or ErrClosed, and that no descriptor outlives Close.
func TestReadsRacingRotationCompactionAndClose(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(Options{Dir: dir, SegmentSizeMaxBytes: 2048, Prealloc: true})
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			if _, err := w.Append(context.Background(), testRecord(i, 100)); err != nil {
				t.Errorf("Append %d: %v", i, err)
				return
			}
			if i%20 == 19 {
				_ = w.StoreCheckpoint(w.DurableNext())
				_ = w.FlushCheckpoint()
			}
		}
	})
	for range 2 {
		wg.Go(func() {
			for next := uint64(0); next < n; {
				got, err := w.ReadFrom(next, 8)
				if errors.Is(err, domain.ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("ReadFrom(%d): %v", next, err)
					return
				}
				for _, e := range got {
					if e.Seq < next || !sameRecord(e.Record, testRecord(int(e.Seq), 100)) {
						t.Errorf("seq %d read from %d: wrong record", e.Seq, next)
						return
					}
					next = e.Seq + 1
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if fds := openFDs(t, dir); len(fds) != 0 {
		t.Fatalf("descriptors left after Close: %v", fds)
	}
}

// ensure that Close racing readers, an appender (rolling into prepared
// segments) and compaction on the real filesystem leaves no descriptor
// open, and that every read before it returned the right records.
func TestCloseRacingReadsLeavesNoDescriptor(t *testing.T) {
	for iter := range 10 {
		dir := t.TempDir()
		w, err := Open(Options{Dir: dir, SegmentSizeMaxBytes: 2048, Prealloc: true})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Go(func() {
			for i := 0; ; i++ {
				if _, err := w.Append(context.Background(), testRecord(i, 100)); err != nil {
					if !errors.Is(err, domain.ErrClosed) {
						t.Errorf("append: %v", err)
					}
					return
				}
				if i%10 == 9 {
					_ = w.StoreCheckpoint(w.DurableNext())
					_ = w.FlushCheckpoint()
				}
			}
		})
		for range 3 {
			wg.Go(func() { readUntilClosed(t, w, stop) })
		}
		pollUntil(t, "some segments", func() bool { return w.DurableNext() > uint64(50+iter*3) })
		_ = w.Close()
		close(stop)
		wg.Wait()
		if fds := openFDs(t, dir); len(fds) != 0 {
			t.Fatalf("descriptors left after Close: %v", fds)
		}
	}
}

// readUntilClosed reads w in small chunks, checking each record, until w
// is closed or stop is.
func readUntilClosed(t *testing.T, w *WAL, stop <-chan struct{}) {
	next := uint64(0)
	for {
		select {
		case <-stop:
			return
		default:
		}
		got, err := w.ReadFrom(next, 4)
		if errors.Is(err, domain.ErrClosed) {
			return
		}
		if err != nil {
			t.Errorf("read: %v", err)
			return
		}
		for _, e := range got {
			if !sameRecord(e.Record, testRecord(int(e.Seq), 100)) {
				t.Errorf("wrong record %d", e.Seq)
				return
			}
			next = e.Seq + 1
		}
	}
}

// ensure that a read whose segment compaction removes between listing it
// and opening it starts over from the oldest kept record instead of
// failing.
func TestReadRacingCompactionStartsOverAtTheOldestKept(t *testing.T) {
	var w *WAL
	var armed atomic.Bool
	first := fmt.Sprintf("%020d%s", 0, segmentFileSuffix)
	fsys := vfs.Inject(vfs.NewMem(), func(op vfs.Op, name string) error {
		if op == vfs.OpOpen && strings.HasSuffix(name, first) && armed.CompareAndSwap(true, false) {
			if err := w.compactBefore(w.Checkpoint()); err != nil {
				t.Errorf("compact: %v", err)
			}
		}
		return nil
	})
	w = openMem(t, fsys, Options{SegmentSizeMaxBytes: 2048})
	mustAppendN(t, w, 40, 100)
	w.mu.Lock()
	segs := len(w.segments)
	keptFrom := w.segments[1].base
	w.mu.Unlock()
	if segs < 3 {
		t.Fatalf("%d segments, want at least 3", segs)
	}
	if err := w.StoreCheckpoint(keptFrom); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	got, err := w.ReadFrom(0, 1000)
	if err != nil {
		t.Fatalf("read racing compaction: %v", err)
	}
	if armed.Load() {
		t.Fatal("the read never opened segment 0: the race was not staged")
	}
	if len(got) == 0 || got[0].Seq != keptFrom || got[len(got)-1].Seq != w.DurableNext()-1 {
		t.Fatalf("read %d records from %d, want %d through %d", len(got), got[0].Seq, keptFrom, w.DurableNext()-1)
	}
}
