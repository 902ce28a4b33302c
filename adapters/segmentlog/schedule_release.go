package segmentlog

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/narad/narad/adapters/schedulefile"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/schedule"
	"github.com/narad/narad/ports"
)

// Release moves ref's due records to its log: it loads the earliest bucket
// once its window has started, commits up to maxRecords due records in
// one durable commit (read back from their bucket file), then marks them
// fired in the file; a bucket whose window has passed with nothing pending
// is deleted. Under the produce lock, refused while a move's freeze holds.
func (s *Store) Release(ctx context.Context, ref domain.PartitionRef, nowMs int64, maxRecords int) (ports.Released, error) {
	if err := validateRef(ref); err != nil {
		return ports.Released{}, err
	}
	if err := ctx.Err(); err != nil {
		return ports.Released{}, err
	}
	sl := s.slotFor(ref)
	sl.produce.Lock()
	defer sl.produce.Unlock()
	if sl.freeze.active(s.opts.Now()) {
		return ports.Released{}, errFrozen(ref)
	}
	l, err := s.resolve(sl, ref.TopicID, true)
	if err != nil {
		return ports.Released{}, err
	}
	st := &sl.sched
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := s.schedPrimeLocked(sl, ref.TopicID); err != nil {
		return ports.Released{}, err
	}
	defer s.schedPublish(sl, ref)
	var out ports.Released
	for out.Count < maxRecords {
		b, err := s.loadDueLocked(sl, nowMs)
		if err != nil || b == nil {
			return out, err
		}
		due := b.Due(nowMs, maxRecords-out.Count)
		if len(due) > 0 {
			if err := s.commitDueLocked(sl, l, b, due, nowMs, &out); err != nil {
				return out, fmt.Errorf("segmentlog: release %d records of %s: %w", len(due), ref, err)
			}
		}
		if !b.Finished(nowMs) {
			return out, nil
		}
		if err := s.dropBucketLocked(sl, b.StartMs); err != nil {
			return out, err
		}
	}
	return out, nil
}

// loadDueLocked returns the loaded bucket, loading the earliest one when
// none is and its window has started; nil when nothing is due yet.
func (s *Store) loadDueLocked(sl *slot, nowMs int64) (*schedule.Bucket, error) {
	st := &sl.sched
	if b := st.part.Loaded(); b != nil {
		return b, nil
	}
	start, ok := st.part.Earliest()
	if !ok || start > nowMs {
		return nil, nil
	}
	if st.tail != nil && st.tailStart == start {
		closeTailLocked(st) // one handle per file: the loaded one appends from now on
	}
	f, entries, err := schedulefile.Open(s.opts.FS, filepath.Join(sl.dir, schedulefile.Name(start)), false)
	if err != nil {
		return nil, fmt.Errorf("segmentlog: load bucket %d of %s: %w", start, sl.dir, err)
	}
	b := schedule.NewBucket(start, entries)
	st.file = f
	st.part.Load(b)
	return b, nil
}

// commitDueLocked reads due's records, commits them to l and marks them
// fired. A record whose frame no longer reads back is logged and marked
// fired (it cannot be delivered; keeping it would retry it forever). On a
// failed commit the records go back to the bucket's pending set.
func (s *Store) commitDueLocked(sl *slot, l *partitionLog, b *schedule.Bucket, due []schedule.Entry, nowMs int64, out *ports.Released) error {
	st := &sl.sched
	recs := make([]domain.Record, 0, len(due))
	ordinals := make([]uint32, 0, len(due))
	lags := make([]int64, 0, len(due))
	for _, e := range due {
		ordinals = append(ordinals, e.Ordinal)
		r, err := st.file.Read(e)
		if err != nil {
			s.opts.Logger.Error("a scheduled record does not read back; it is dropped", "dir", sl.dir, "deliver_at_ms", e.DeliverAtMs, "error", err)
			continue
		}
		recs = append(recs, domain.Record{Key: r.Key, Payload: r.Payload, CommittedAtMs: nowMs})
		lags = append(lags, nowMs-e.DeliverAtMs)
	}
	if len(recs) > 0 {
		if _, err := l.commit(recs); err != nil {
			b.Add(due...)
			return err
		}
	}
	if err := st.file.MarkFired(ordinals); err != nil {
		// The records are in the log; a lost mark only releases them again.
		s.opts.Logger.Warn("marking released scheduled records failed; they may be delivered twice", "dir", sl.dir, "error", err)
	}
	st.part.Released(len(due))
	out.Count += len(recs)
	for _, r := range recs {
		out.Bytes += len(r.Payload)
	}
	out.LagMs = append(out.LagMs, lags...)
	return nil
}

// dropBucketLocked deletes the finished bucket starting at start.
func (s *Store) dropBucketLocked(sl *slot, start int64) error {
	st := &sl.sched
	if st.file != nil {
		_ = st.file.Close()
		st.file = nil
	}
	st.part.Forget(start)
	if err := s.opts.FS.Remove(filepath.Join(sl.dir, schedulefile.Name(start))); err != nil {
		return fmt.Errorf("segmentlog: delete finished bucket %d of %s: %w", start, sl.dir, err)
	}
	return nil
}

// Scheduled lists the local partitions holding scheduled records; the
// first call scans every local partition directory for bucket files.
func (s *Store) Scheduled() ([]ports.ScheduledPartition, error) {
	if err := s.scanSchedules(); err != nil {
		return nil, err
	}
	ix := &s.sched
	ix.mu.Lock()
	defer ix.mu.Unlock()
	out := make([]ports.ScheduledPartition, 0, len(ix.slots))
	for _, p := range ix.slots {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b ports.ScheduledPartition) int {
		return cmp.Or(strings.Compare(a.Ref.Topic, b.Ref.Topic), cmp.Compare(a.Ref.Partition, b.Ref.Partition))
	})
	return out, nil
}

// scanSchedules primes, once, the schedule of every local partition whose
// directory holds a bucket file (they survive restarts and arrive with
// moves; Install primes its own). Two callers at once list the
// directories twice but read each bucket file once: a primed partition is
// not primed again.
func (s *Store) scanSchedules() error {
	ix := &s.sched
	ix.mu.Lock()
	scanned := ix.scanned
	ix.mu.Unlock()
	if scanned {
		return nil
	}
	refs, err := s.LocalPartitions()
	if err != nil {
		return err
	}
	for _, ref := range refs {
		if err := s.scanOne(ref); err != nil {
			return err
		}
	}
	ix.mu.Lock()
	ix.scanned = true
	ix.mu.Unlock()
	return nil
}

func (s *Store) scanOne(ref domain.PartitionRef) error {
	names, err := s.opts.FS.List(PartitionDir(s.opts.DataDir, ref.Topic, ref.Partition))
	if err != nil || !slices.ContainsFunc(names, isBucketName) {
		return nil // gone meanwhile, or nothing scheduled
	}
	sl := s.slotFor(ref)
	sl.sched.mu.Lock()
	defer sl.sched.mu.Unlock()
	if err := s.schedPrimeLocked(sl, ref.TopicID); err != nil {
		return err
	}
	s.schedPublish(sl, ref)
	return nil
}

func isBucketName(name string) bool {
	_, ok := schedulefile.ParseName(name)
	return ok
}
