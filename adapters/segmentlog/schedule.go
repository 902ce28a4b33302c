package segmentlog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"

	"github.com/narad/narad/adapters/schedulefile"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/schedule"
	"github.com/narad/narad/ports"
)

var _ ports.PartitionSchedule = (*Store)(nil)

// schedState is one slot's schedule: the bucket files in its directory
// (domain/schedule.Partition) and the loaded bucket's open file. Guarded by
// mu, taken after the slot's produce lock.
type schedState struct {
	mu    sync.Mutex
	ready bool           // the directory was scanned for id
	id    domain.TopicID // the incarnation the state reflects
	part  schedule.Partition
	file  *schedulefile.Bucket // the loaded bucket's file
	// tail is the last bucket appended to other than the loaded one, kept
	// open because the next batch mostly goes to it too (opening a bucket
	// reads it whole).
	tail      *schedulefile.Bucket
	tailStart int64
}

// schedIndex lists the slots holding scheduled records, for Scheduled and
// the release loop's wake-up. Taken after a slot's schedState.mu.
type schedIndex struct {
	mu      sync.Mutex
	scanned bool
	slots   map[*slot]ports.ScheduledPartition
	wake    chan struct{}
}

// Schedule makes recs durable in ref's bucket files: one append and one
// fdatasync per bucket the batch touches, under the partition's produce
// lock, refused while a move's freeze holds.
func (s *Store) Schedule(ctx context.Context, ref domain.PartitionRef, recs []domain.Record) error {
	if err := validateRef(ref); err != nil {
		return err
	}
	if err := checkScheduled(recs); err != nil {
		return fmt.Errorf("segmentlog: schedule on %s: %w", ref, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	sl := s.slotFor(ref)
	sl.produce.Lock()
	defer sl.produce.Unlock()
	if sl.freeze.active(s.opts.Now()) {
		return errFrozen(ref)
	}
	if _, err := s.resolve(sl, ref.TopicID, true); err != nil {
		return err
	}
	st := &sl.sched
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := s.schedPrimeLocked(sl, ref.TopicID); err != nil {
		return err
	}
	defer s.schedPublish(sl, ref)
	for _, run := range byBucket(recs) {
		if err := s.appendBucketLocked(sl, run); err != nil {
			return fmt.Errorf("segmentlog: schedule %d records on %s: %w", len(recs), ref, err)
		}
	}
	return nil
}

// checkScheduled refuses a batch no bucket may hold.
func checkScheduled(recs []domain.Record) error {
	if err := checkRecords(recs); err != nil {
		return err
	}
	for i, r := range recs {
		if r.DeliverAtMs <= 0 || len(r.Payload) == 0 {
			return fmt.Errorf("record %d: no deliver-at or empty payload: %w", i, domain.ErrInvalidRecord)
		}
	}
	return nil
}

// byBucket splits recs into runs of one bucket each, earliest bucket first,
// keeping their order inside a run.
func byBucket(recs []domain.Record) [][]domain.Record {
	runs := map[int64][]domain.Record{}
	var starts []int64
	for _, r := range recs {
		start := schedule.BucketStart(r.DeliverAtMs)
		if _, ok := runs[start]; !ok {
			starts = append(starts, start)
		}
		runs[start] = append(runs[start], r)
	}
	slices.Sort(starts)
	out := make([][]domain.Record, len(starts))
	for i, start := range starts {
		out[i] = runs[start]
	}
	return out
}

// appendBucketLocked appends one bucket's run, to the loaded bucket's open
// file when it is that bucket (whose pending set takes the entries too).
func (s *Store) appendBucketLocked(sl *slot, run []domain.Record) error {
	st := &sl.sched
	start := schedule.BucketStart(run[0].DeliverAtMs)
	if b := st.part.Loaded(); b != nil && b.StartMs == start {
		entries, err := st.file.Append(run)
		if err != nil {
			return err
		}
		b.Add(entries...)
		st.part.Note(start, len(run))
		return nil
	}
	if st.tail == nil || st.tailStart != start {
		closeTailLocked(st)
		f, _, err := schedulefile.Open(s.opts.FS, filepath.Join(sl.dir, schedulefile.Name(start)), true)
		if err != nil {
			return err
		}
		st.tail, st.tailStart = f, start
	}
	if _, err := st.tail.Append(run); err != nil {
		return err
	}
	st.part.Note(start, len(run))
	return nil
}

// closeTailLocked closes the kept append handle, if any.
func closeTailLocked(st *schedState) {
	if st.tail != nil {
		_ = st.tail.Close()
		st.tail = nil
	}
}

// schedPrimeLocked scans sl's directory for bucket files the first time
// the slot's schedule is used for incarnation id (or after a reset): their
// starts and, by reading each, the count of records they hold.
func (s *Store) schedPrimeLocked(sl *slot, id domain.TopicID) error {
	st := &sl.sched
	if st.ready && st.id == id {
		return nil
	}
	s.schedResetLocked(sl)
	names, err := s.opts.FS.List(sl.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("segmentlog: list %s: %w", sl.dir, err)
	}
	var count int64
	for _, name := range names {
		start, ok := schedulefile.ParseName(name)
		if !ok {
			continue
		}
		f, _, err := schedulefile.Open(s.opts.FS, filepath.Join(sl.dir, name), false)
		if err != nil {
			return fmt.Errorf("segmentlog: open %s: %w", name, err)
		}
		count += int64(f.Pending())
		_ = f.Close()
		st.part.Note(start, 0)
	}
	st.part.SetCount(count)
	st.ready, st.id = true, id
	return nil
}

// schedResetLocked forgets sl's schedule state (the directory was replaced,
// removed or set aside); the next use scans again.
func (s *Store) schedResetLocked(sl *slot) {
	st := &sl.sched
	if st.file != nil {
		_ = st.file.Close()
	}
	closeTailLocked(st)
	st.file, st.ready, st.id, st.part = nil, false, "", schedule.Partition{}
	s.sched.mu.Lock()
	delete(s.sched.slots, sl)
	s.sched.mu.Unlock()
}

// schedForget resets sl's schedule state under its lock.
func (s *Store) schedForget(sl *slot) {
	sl.sched.mu.Lock()
	defer sl.sched.mu.Unlock()
	s.schedResetLocked(sl)
}

// schedPublish updates the index entry of sl after a change; a next release
// that moved earlier (or a new entry) wakes the release loop.
func (s *Store) schedPublish(sl *slot, ref domain.PartitionRef) {
	st := &sl.sched
	next, ok := st.part.Next()
	ix := &s.sched
	ix.mu.Lock()
	defer ix.mu.Unlock()
	old, had := ix.slots[sl]
	if !ok {
		delete(ix.slots, sl)
		return
	}
	if ix.slots == nil {
		ix.slots = map[*slot]ports.ScheduledPartition{}
	}
	ref.TopicID = st.id
	ix.slots[sl] = ports.ScheduledPartition{Ref: ref, NextMs: next, Count: st.part.Count()}
	if (!had || next < old.NextMs) && ix.wake != nil {
		close(ix.wake)
		ix.wake = nil
	}
}

// ScheduleChanged returns the channel the next earlier wake-up closes.
func (s *Store) ScheduleChanged() <-chan struct{} {
	ix := &s.sched
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.wake == nil {
		ix.wake = make(chan struct{})
	}
	return ix.wake
}

// schedInstalled makes a partition a move just installed known to the
// release loop with the bucket files it brought.
func (s *Store) schedInstalled(sl *slot, ref domain.PartitionRef) {
	st := &sl.sched
	st.mu.Lock()
	defer st.mu.Unlock()
	s.schedResetLocked(sl)
	if err := s.schedPrimeLocked(sl, ref.TopicID); err != nil {
		s.opts.Logger.Error("reading the schedule a move installed; it is read again at the next use", "dir", sl.dir, "error", err)
		s.schedResetLocked(sl)
		return
	}
	s.schedPublish(sl, ref)
}
