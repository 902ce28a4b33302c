package segmentlog

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// faultRig is a store on a MemFS behind an injecting filesystem.
type faultRig struct {
	mem    *vfs.MemFS
	faults *vfs.Faults
	opts   Options
	hooks  *testHooks
}

func newFaultRig(segMax int64) *faultRig {
	r := &faultRig{mem: vfs.NewMem(), faults: &vfs.Faults{}, hooks: &testHooks{}}
	r.opts = testOptions(vfs.Inject(r.mem, r.faults.Hook), newFakeClock())
	r.opts.SegmentMaxBytes = segMax
	r.opts.hooks = r.hooks
	return r
}

func (r *faultRig) reopen(t *testing.T, s *Store) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return mustOpen(t, r.opts)
}

// ensure that a commit failing at the write, the fsync, the read-back (an
// I/O error or a flipped bit), the roll or the release of the hwm file
// leaves nothing above the high watermark: after the retry each record
// appears once, at the offsets the failed attempt had (F31).
func TestFailedCommitLeavesNothing(t *testing.T) {
	cases := []struct {
		name   string
		segMax int64
		arm    func(r *faultRig)
		prep   func(t *testing.T, r *faultRig, s *Store) *Store // before arming
		reopen bool                                             // the failure poisons: reopen before the retry
	}{
		{name: "write", arm: func(r *faultRig) { r.faults.FailNext(vfs.OpWrite, ".log") }},
		{name: "fsync", arm: func(r *faultRig) { r.faults.FailNext(vfs.OpSync, ".log") }, reopen: true},
		{name: "read_back_io", arm: func(r *faultRig) { r.faults.FailNext(vfs.OpRead, ".log") }},
		{name: "read_back_bit_flip", arm: func(r *faultRig) { flipOnce(r.hooks) }},
		{name: "roll_create", segMax: 600, arm: func(r *faultRig) { r.faults.FailNext(vfs.OpCreate, ".log") }},
		{name: "roll_dir_sync", segMax: 600, arm: func(r *faultRig) { r.faults.FailNext(vfs.OpSyncDir, "p00000") }},
		{name: "hwm_release", arm: func(r *faultRig) { r.faults.FailNext(vfs.OpTruncate, hwmFileName) },
			prep: func(t *testing.T, r *faultRig, s *Store) *Store { return r.reopen(t, s) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newFaultRig(c.segMax)
			s := mustOpen(t, r.opts)
			defer func() { _ = s.Close() }()
			ref := testRef(0)
			a, b := batch(1, 10), batch(2, 10)
			mustCommit(t, s, ref, a)
			if c.prep != nil {
				s = c.prep(t, r, s)
			}
			c.arm(r)
			if _, err := s.CommitDurable(context.Background(), ref, b); err == nil {
				t.Fatal("armed commit succeeded")
			}
			if got := hwmBounds(t, s, ref); got != 10 {
				t.Fatalf("high watermark %d after the failed commit, want 10", got)
			}
			wantErr(t, readErr(s, ref, 10), domain.ErrOffsetNotWritten, "read above the high watermark")
			crashed := r.opts
			crashed.FS = r.mem.Crash(vfs.CrashOptions{})
			cs := mustOpen(t, crashed)
			checkExactly(t, cs, ref, a) // a crash now must not expose the failed attempt
			_ = cs.Close()
			if c.reopen {
				s = r.reopen(t, s)
			}
			if first := mustCommit(t, s, ref, b); first != 10 {
				t.Fatalf("retry at %d, want 10 (the failed attempt's offsets)", first)
			}
			checkExactly(t, s, ref, append(a, b...))
			s = r.reopen(t, s)
			checkExactly(t, s, ref, append(a, b...))
		})
	}
}

// flipOnce makes the next read-back see one flipped bit.
func flipOnce(h *testHooks) {
	var done atomic.Bool
	h.readBack = func(raw []byte) {
		if !done.Swap(true) {
			raw[len(raw)/2] ^= 0x10
		}
	}
}

func readErr(s *Store, ref domain.PartitionRef, from int64) error {
	_, err := s.Read(context.Background(), ref, from, 1, 0)
	return err
}

// checkExactly fails t unless the partition holds exactly want from 0.
func checkExactly(t *testing.T, s *Store, ref domain.PartitionRef, want []domain.Record) {
	t.Helper()
	if got := hwmBounds(t, s, ref); got != int64(len(want)) {
		t.Fatalf("high watermark %d, want %d", got, len(want))
	}
	checkRange(t, s, ref, 0, want)
	wantErr(t, readErr(s, ref, int64(len(want))), domain.ErrOffsetNotWritten, "read at the high watermark")
}

// ensure that one failed fsync poisons the log: every later commit and
// append fails with ErrLogPoisoned until the log is reopened, reads keep
// working, and after the reopen commits work again at the same offsets (F32).
func TestFailedFsyncPoisonsUntilReopen(t *testing.T) {
	r := newFaultRig(0)
	s := mustOpen(t, r.opts)
	defer func() { _ = s.Close() }()
	ref, other := testRef(0), testRef(1)
	a := batch(1, 5)
	mustCommit(t, s, ref, a)
	mustCommit(t, s, other, batch(9, 2))
	r.faults.FailNext(vfs.OpSync, partitionDirName(0))
	_, err := s.CommitDurable(context.Background(), ref, batch(2, 3))
	wantErr(t, err, domain.ErrLogPoisoned, "the commit whose fsync failed")
	for i := range 3 {
		_, err := s.CommitDurable(context.Background(), ref, batch(3+i, 1))
		wantErr(t, err, domain.ErrLogPoisoned, "a later commit")
	}
	_, err = s.Append(context.Background(), ref, batch(7, 1))
	wantErr(t, err, domain.ErrLogPoisoned, "a later append")
	checkRange(t, s, ref, 0, a)
	mustCommit(t, s, other, batch(10, 1)) // other partitions are unaffected
	if got := s.Stats().FsyncPoisoned; got != 1 {
		t.Fatalf("FsyncPoisoned = %d, want 1", got)
	}
	s.evictOnce() // the scan closes poisoned logs; the next get reopens
	b := batch(8, 3)
	if first := mustCommit(t, s, ref, b); first != 5 {
		t.Fatalf("commit after reopen at %d, want 5", first)
	}
	checkExactly(t, s, ref, append(a, b...))
}

// ensure that a commit whose truncation also fails poisons the log and its
// frames stay hidden across a clean close and reopen (the hidden tail), until
// a later commit advances over them (F19, 4.6).
func TestHiddenTailStaysHiddenAcrossCleanClose(t *testing.T) {
	r := newFaultRig(0)
	s := mustOpen(t, r.opts)
	defer func() { _ = s.Close() }()
	ref := testRef(0)
	a, b := batch(1, 4), batch(2, 3)
	mustCommit(t, s, ref, a)
	r.faults.FailNext(vfs.OpSync, ".log")
	r.faults.FailNext(vfs.OpTruncate, ".log")
	if _, err := s.CommitDurable(context.Background(), ref, b); !errors.Is(err, domain.ErrLogPoisoned) {
		t.Fatalf("commit: %v, want ErrLogPoisoned", err)
	}
	s = r.reopen(t, s)
	if got := hwmBounds(t, s, ref); got != 4 {
		t.Fatalf("high watermark %d after a clean restart, want 4: the hidden tail must stay hidden", got)
	}
	wantErr(t, readErr(s, ref, 4), domain.ErrOffsetNotWritten, "read of the hidden tail")
	c := batch(3, 2)
	if first := mustCommit(t, s, ref, c); first != 7 {
		t.Fatalf("commit after the hidden tail at %d, want 7", first)
	}
	checkExactly(t, s, ref, append(append(a, b...), c...))
}
