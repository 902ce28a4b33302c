package wal

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// ensure that with small segments many rolls happen, every segment is named
// after its first sequence and stays within the limit, and a reopen reads
// every record back.
func TestRotationReopenReadsEverything(t *testing.T) {
	const segMax = 1024
	opts := Options{SegmentSizeMaxBytes: segMax}
	mem := vfs.NewMem()
	w := openMem(t, mem, opts)
	var want []domain.IngressRecord
	for i := 0; i < 200; {
		if i%5 == 0 {
			batch := []domain.IngressRecord{testRecord(i, 50), testRecord(i+1, 70), testRecord(i+2, 10)}
			if _, err := w.AppendMany(context.Background(), batch); err != nil {
				t.Fatal(err)
			}
			want, i = append(want, batch...), i+3
			continue
		}
		want = append(want, testRecord(i, 50))
		if _, err := w.Append(context.Background(), want[i]); err != nil {
			t.Fatal(err)
		}
		i++
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	segs := segmentFiles(t, mem, testDir)
	if len(segs) < 10 {
		t.Fatalf("%d segments, want many", len(segs))
	}
	for _, name := range segs {
		path := filepath.Join(testDir, name)
		base, _ := parseSegmentName(name)
		if size := fileSize(t, mem, path); size > segMax {
			t.Fatalf("%s holds %d bytes, limit %d", name, size, segMax)
		}
		data, _ := vfs.ReadFile(mem, path)
		if h, fault := parseFrameHeader(data); fault != faultNone || h.seq != base {
			t.Fatalf("%s starts with seq %d (%v), want its base %d", name, h.seq, fault, base)
		}
	}
	again := openMem(t, mem, opts)
	checkRecords(t, readAll(t, again, 0), 0, want)
	checkRecords(t, readAll(t, again, 137), 137, want[137:])
}

// ensure that each new segment's name is made durable (directory fsync) after
// the old segment is synced and before the first write targets it.
func TestRollSyncsDirectoryBeforeFirstWrite(t *testing.T) {
	log := &opLog{}
	w := openMem(t, vfs.Inject(vfs.NewMem(), log.hook), Options{SegmentSizeMaxBytes: 300})
	mustAppendN(t, w, 20, 40)
	ops := log.snapshot()
	created := 0
	for i, o := range ops {
		if o.op != vfs.OpCreate || filepath.Ext(o.name) != segmentFileSuffix {
			continue
		}
		created++
		dirSynced := false
		for _, later := range ops[i+1:] {
			if later.op == vfs.OpSyncDir && later.name == testDir {
				dirSynced = true
			}
			if later.op == vfs.OpWrite && later.name == o.name {
				if !dirSynced {
					t.Fatalf("first write to %s before the directory fsync", o.name)
				}
				break
			}
		}
	}
	if created < 3 {
		t.Fatalf("%d segments created, want several rolls", created)
	}
}

// ensure that compaction deletes every segment whose successor's base is at
// or below the durable checkpoint, keeps the rest, and reopen still works.
func TestCompactionDeletesBelowCheckpoint(t *testing.T) {
	opts := Options{SegmentSizeMaxBytes: 300}
	mem := vfs.NewMem()
	w := openMem(t, mem, opts)
	want := mustAppendN(t, w, 30, 40)
	if err := w.StoreCheckpoint(17); err != nil {
		t.Fatal(err)
	}
	if err := w.FlushCheckpoint(); err != nil {
		t.Fatal(err)
	}
	segs := segmentFiles(t, mem, testDir)
	first, _ := parseSegmentName(segs[0])
	second, _ := parseSegmentName(segs[1])
	if first > 17 || second <= 17 {
		t.Fatalf("after compaction at 17 the segments are %v", segs)
	}
	checkRecords(t, readAll(t, w, 17), 17, want[17:])
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	again := openMem(t, mem, opts)
	checkRecords(t, readAll(t, again, 17), 17, want[17:])
}

// ensure that a fully dispatched active segment below 1 MiB is neither rolled
// nor deleted: the last segment is always kept.
func TestCompactionBelowFloorKeepsActiveSegment(t *testing.T) {
	mem := vfs.NewMem()
	w := openMem(t, mem, Options{})
	mustAppendN(t, w, 10, 100)
	if err := w.StoreCheckpoint(10); err != nil {
		t.Fatal(err)
	}
	if err := w.FlushCheckpoint(); err != nil {
		t.Fatal(err)
	}
	if segs := segmentFiles(t, mem, testDir); len(segs) != 1 || segs[0] != segmentName(0) {
		t.Fatalf("segments %v, want only %s", segs, segmentName(0))
	}
}

// ensure that story F5 cannot recur: a dispatched active segment of 1 MiB or
// more is rolled to an empty segment at the next sequence and the old one is
// deleted by the background flusher; a restart resumes at or past the
// checkpoint.
func TestAutoReclaimF5(t *testing.T) {
	mem := vfs.NewMem()
	opts := Options{CheckpointFlushInterval: 5 * time.Millisecond}
	w := openMem(t, mem, opts)
	var recs []domain.IngressRecord
	for i := range 70 {
		recs = append(recs, testRecord(i, 16<<10))
	}
	if _, err := w.AppendMany(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	next := w.DurableNext()
	if err := w.StoreCheckpoint(next); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "old segment reclaimed", func() bool {
		segs := segmentFiles(t, mem, testDir)
		return len(segs) == 1 && segs[0] == segmentName(next)
	})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	again := openMem(t, mem.Crash(vfs.CrashOptions{}), opts)
	if again.DurableNext() < again.Checkpoint() || again.Checkpoint() != next {
		t.Fatalf("restart: next %d, checkpoint %d, want both %d", again.DurableNext(), again.Checkpoint(), next)
	}
	if seq, err := again.Append(context.Background(), testRecord(1, 10)); err != nil || seq != next {
		t.Fatalf("append after restart = %d, %v; want %d", seq, err, next)
	}
}
