package wal

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// latchCase fails the first segment write or fsync after some records are
// acked, with a batch in flight and more records staged behind it.
type latchCase struct {
	name string
	op   vfs.Op
}

var latchCases = []latchCase{{"write_fails", vfs.OpWrite}, {"fsync_fails", vfs.OpSync}}

// ensure that a failed write or fsync fails the in-flight batch and the one
// staged behind it with ErrWALFailed, latches every later append, writes
// nothing afterwards, and that a reopen holds every acked record.
func TestDiskFailureLatches(t *testing.T) {
	for _, c := range latchCases {
		t.Run(c.name, func(t *testing.T) {
			mem := vfs.NewMem()
			gate := newSyncGate(c.op)
			gate.fail = vfs.ErrInjected
			log := &opLog{next: gate.hook}
			w := openMem(t, vfs.Inject(mem, log.hook), Options{})
			acked := mustAppendN(t, w, 3, 30)

			gate.armed.Store(true)
			inFlight := appendAsync(context.Background(), w, testRecord(10, 30))
			<-gate.entered
			staged := make(chan error, 1)
			go func() {
				_, err := w.AppendMany(context.Background(), []domain.IngressRecord{testRecord(11, 30), testRecord(12, 30)})
				staged <- err
			}()
			pollUntil(t, "second batch staged", func() bool { return w.staged() == 6 })
			opsAtFailure := len(log.snapshot())
			close(gate.release)

			if r := <-inFlight; !errors.Is(r.err, domain.ErrWALFailed) || !errors.Is(r.err, vfs.ErrInjected) {
				t.Fatalf("in-flight append: %v, want ErrWALFailed wrapping the cause", r.err)
			}
			if err := <-staged; !errors.Is(err, domain.ErrWALFailed) {
				t.Fatalf("staged batch: %v, want ErrWALFailed", err)
			}
			if !w.Failed() {
				t.Fatal("Failed() = false after a disk failure")
			}
			for range 3 {
				if _, err := w.Append(context.Background(), testRecord(20, 30)); !errors.Is(err, domain.ErrWALFailed) {
					t.Fatalf("append after the latch: %v", err)
				}
			}
			checkNothingWrittenAfter(t, log, opsAtFailure)
			if err := w.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			checkReopenHoldsAcked(t, mem, acked, c.op)
		})
	}
}

// checkNothingWrittenAfter fails t if any segment write, fsync or create
// happened after the first `after` logged ops.
func checkNothingWrittenAfter(t *testing.T, log *opLog, after int) {
	t.Helper()
	for _, o := range log.snapshot()[after:] {
		if filepath.Ext(o.name) == segmentFileSuffix && (o.op == vfs.OpWrite || o.op == vfs.OpSync || o.op == vfs.OpCreate) {
			t.Fatalf("op %v on %s after the disk failure", o.op, o.name)
		}
	}
}

// checkReopenHoldsAcked reopens both the machine-crash image (synced bytes
// only: exactly the acked records) and the live files (a process restart:
// a failed fsync may leave its written batch, which may then be dispatched,
// but only as a prefix right after the acked records).
func checkReopenHoldsAcked(t *testing.T, mem *vfs.MemFS, acked []domain.IngressRecord, op vfs.Op) {
	t.Helper()
	crashed := openMem(t, mem.Crash(vfs.CrashOptions{}), Options{})
	checkRecords(t, readAll(t, crashed, 0), 0, acked)

	live := openMem(t, mem, Options{})
	got := readAll(t, live, 0)
	want := append(append([]domain.IngressRecord(nil), acked...), testRecord(10, 30))
	if op == vfs.OpWrite || len(got) == len(acked) {
		want = acked
	}
	checkRecords(t, got, 0, want)
	if seq, err := live.Append(context.Background(), testRecord(30, 30)); err != nil || seq != uint64(len(got)) {
		t.Fatalf("append after reopen = %d, %v; want %d", seq, err, len(got))
	}
}

// ensure that a failed segment create during a roll latches the WAL like a
// failed write.
func TestRollCreateFailureLatches(t *testing.T) {
	faults := &vfs.Faults{}
	mem := vfs.NewMem()
	w := openMem(t, vfs.Inject(mem, faults.Hook), Options{SegmentSizeMaxBytes: 200})
	acked := mustAppendN(t, w, 2, 60)
	faults.FailNext(vfs.OpCreate, segmentFileSuffix)
	var err error
	for i := 0; i < 3 && err == nil; i++ { // until an append needs the roll
		_, err = w.Append(context.Background(), testRecord(2+i, 60))
	}
	if !errors.Is(err, domain.ErrWALFailed) {
		t.Fatalf("append across a failed roll: %v, want ErrWALFailed", err)
	}
	if !w.Failed() {
		t.Fatal("a failed roll did not latch the WAL")
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	again := openMem(t, mem, Options{SegmentSizeMaxBytes: 200})
	if got := readAll(t, again, 0); len(got) < len(acked) {
		t.Fatalf("reopen holds %d records, %d were acked", len(got), len(acked))
	}
}
