package segmentlog

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// observed is what a recordingObserver saw.
type observed struct {
	flushes, fsyncs       int
	flushBytes            int64
	hwmOK, hwmFailed      int
	deletedBytes, deleted int64
	runs                  int
	closed                []string // topic/partition of each close, in order
	errors                map[string]int
	labels                map[string]bool // topic/partition pairs seen
}

// recordingObserver keeps every observation for the test to inspect.
type recordingObserver struct {
	mu sync.Mutex
	observed
}

func newRecordingObserver() *recordingObserver {
	return &recordingObserver{observed: observed{errors: map[string]int{}, labels: map[string]bool{}}}
}

func (o *recordingObserver) seen(topic string, p int32) {
	o.labels[topic+"/"+partitionDirName(p)] = true
}

func (o *recordingObserver) Flushed(topic string, p int32, bytes int64, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen(topic, p)
	o.flushes++
	o.flushBytes += bytes
}

func (o *recordingObserver) Fsynced(topic string, p int32, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen(topic, p)
	o.fsyncs++
}

func (o *recordingObserver) HighWatermarkPersisted(topic string, p int32, _ time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen(topic, p)
	if err != nil {
		o.hwmFailed++
	} else {
		o.hwmOK++
	}
}

func (o *recordingObserver) RetentionDeleted(topic string, p int32, bytes, messages int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen(topic, p)
	o.deletedBytes += bytes
	o.deleted += messages
}

func (o *recordingObserver) RetentionRun(topic string, p int32, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen(topic, p)
	o.runs++
}

func (o *recordingObserver) StorageError(kind string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.errors[kind]++
}

func (o *recordingObserver) Closed(topic string, p int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = append(o.closed, topic+"/"+partitionDirName(p))
}

func (o *recordingObserver) snapshot() observed {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.observed
	c.errors, c.labels = maps.Clone(o.errors), maps.Clone(o.labels)
	c.closed = slices.Clone(o.closed)
	return c
}

// ensure that a commit reports one flush of the frame bytes and one fsync,
// and that the hwm file is reported once at close and once at the first
// advance after a reopen, all labelled with the partition (api.md §7).
func TestObserverSeesFlushFsyncAndHWM(t *testing.T) {
	mem, obs := vfs.NewMem(), newRecordingObserver()
	opts := testOptions(mem, newFakeClock())
	opts.Observer = obs
	s := mustOpen(t, opts)
	ref := testRef(2)
	mustCommit(t, s, ref, batch(1, 5))
	got := obs.snapshot()
	if got.flushes != 1 || got.fsyncs != 1 || got.flushBytes != segmentSize(t, mem, ref) {
		t.Fatalf("after one commit: %d flushes of %d bytes, %d fsyncs; want 1 of %d bytes, 1", got.flushes, got.flushBytes, got.fsyncs, segmentSize(t, mem, ref))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := obs.snapshot(); got.hwmOK != 1 || !slices.Equal(got.closed, []string{"orders/p00002"}) {
		t.Fatalf("after close: %d hwm writes, closes %v; want 1 and the partition closed once", got.hwmOK, got.closed)
	}
	s = mustOpen(t, opts)
	defer func() { _ = s.Close() }()
	mustCommit(t, s, ref, batch(2, 1))
	mustCommit(t, s, ref, batch(3, 1))
	got = obs.snapshot()
	if got.hwmOK != 2 || got.fsyncs != 3 || !got.labels["orders/p00002"] || len(got.labels) != 1 {
		t.Fatalf("after reopen and two commits: %d hwm writes, %d fsyncs, labels %v; want 2, 3, only orders/p00002", got.hwmOK, got.fsyncs, got.labels)
	}
}

// segmentSize is the size of ref's first segment file.
func segmentSize(t *testing.T, fsys vfs.FS, ref domain.PartitionRef) int64 {
	t.Helper()
	fi, err := fsys.Stat(segPath(ref, 0))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// ensure that a failed fsync reports fsync_poisoned once and a failed hwm
// release reports the hwm write with a failed outcome.
func TestObserverSeesFaults(t *testing.T) {
	r := newFaultRig(0)
	obs := newRecordingObserver()
	r.opts.Observer = obs
	s := mustOpen(t, r.opts)
	ref := testRef(0)
	mustCommit(t, s, ref, batch(1, 2))
	r.faults.FailNext(vfs.OpSync, ".log")
	if _, err := s.CommitDurable(context.Background(), ref, batch(2, 2)); err == nil {
		t.Fatal("commit with a failed fsync succeeded")
	}
	if got := obs.snapshot(); got.errors[ErrorKindFsyncPoisoned] != 1 || got.fsyncs != 2 {
		t.Fatalf("errors %v, fsyncs %d; want one fsync_poisoned and both fsyncs timed", got.errors, got.fsyncs)
	}
	s = r.reopen(t, s) // the close writes the hwm file
	defer func() { _ = s.Close() }()
	r.faults.FailNext(vfs.OpTruncate, hwmFileName)
	if _, err := s.CommitDurable(context.Background(), ref, batch(3, 1)); err == nil {
		t.Fatal("commit with a failed hwm release succeeded")
	}
	if got := obs.snapshot(); got.hwmFailed != 1 || got.hwmOK != 1 {
		t.Fatalf("hwm writes ok %d, failed %d; want 1 and 1", got.hwmOK, got.hwmFailed)
	}
}

// ensure that a sweep reports its run, the bytes and records it deleted by
// age (matching Stats), and an unlink it could not do as retention_unlink.
func TestObserverSeesRetention(t *testing.T) {
	r := newFaultRig(400)
	clock := newFakeClock()
	r.opts.Now = clock.Now
	obs := newRecordingObserver()
	r.opts.Observer = obs
	s := mustOpen(t, r.opts)
	defer func() { _ = s.Close() }()
	ref := testRef(1)
	s.SetRetention(ref.Topic, ref.TopicID, time.Hour)
	for i := range 4 {
		mustCommit(t, s, ref, batch(i, 10)) // each commit fills and rolls a segment
	}
	clock.Advance(2 * time.Hour)
	r.faults.FailNext(vfs.OpRemove, segmentName(0))
	s.reapOnce()
	got, st := obs.snapshot(), s.Stats()
	if got.runs != 1 || got.errors[ErrorKindRetentionUnlink] != 1 {
		t.Fatalf("runs %d, errors %v; want 1 run and one retention_unlink", got.runs, got.errors)
	}
	if got.deleted == 0 || got.deleted != st.MessagesDeleted || got.deletedBytes != st.BytesDeleted {
		t.Fatalf("observed %d records / %d bytes deleted, Stats %d / %d", got.deleted, got.deletedBytes, st.MessagesDeleted, st.BytesDeleted)
	}
	if !got.labels["orders/p00001"] || len(got.labels) != 1 {
		t.Fatalf("labels %v, want only orders/p00001", got.labels)
	}
}
