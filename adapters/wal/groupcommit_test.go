package wal

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// syncGate is a vfs hook that counts segment fsyncs and holds the first one
// armed until release is closed, so a test can stage records while a group
// commit is in flight.
type syncGate struct {
	syncs   atomic.Int64
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
	fail    error // returned by the held op, when set
	op      vfs.Op
}

func newSyncGate(op vfs.Op) *syncGate {
	return &syncGate{entered: make(chan struct{}), release: make(chan struct{}), op: op}
}

func (g *syncGate) hook(op vfs.Op, name string) error {
	if filepath.Ext(name) != segmentFileSuffix {
		return nil
	}
	if op == vfs.OpSync {
		g.syncs.Add(1)
	}
	if op == g.op && g.armed.CompareAndSwap(true, false) {
		close(g.entered)
		<-g.release
		return g.fail
	}
	return nil
}

// appendAsync runs Append in a goroutine and reports its outcome on the
// returned channel.
type appendResult struct {
	seq uint64
	err error
}

func appendAsync(ctx context.Context, w *WAL, rec domain.IngressRecord) <-chan appendResult {
	ch := make(chan appendResult, 1)
	go func() {
		seq, err := w.Append(ctx, rec)
		ch <- appendResult{seq, err}
	}()
	return ch
}

// ensure that appenders arriving while an fsync is in flight stage without
// waiting for it and then share a single write and fsync.
func TestGroupCommitSharesOneFsync(t *testing.T) {
	const appenders = 64
	gate := newSyncGate(vfs.OpSync)
	w := openMem(t, vfs.Inject(vfs.NewMem(), gate.hook), Options{})
	gate.armed.Store(true)
	results := []<-chan appendResult{appendAsync(context.Background(), w, testRecord(0, 10))}
	<-gate.entered
	for i := 1; i < appenders; i++ {
		results = append(results, appendAsync(context.Background(), w, testRecord(i, 10)))
	}
	pollUntil(t, "every appender staged during the fsync", func() bool { return w.staged() == appenders })
	close(gate.release)
	seen := map[uint64]bool{}
	for _, ch := range results {
		r := <-ch
		if r.err != nil || seen[r.seq] {
			t.Fatalf("append: seq %d err %v (duplicate %v)", r.seq, r.err, seen[r.seq])
		}
		seen[r.seq] = true
	}
	if got := gate.syncs.Load(); got > 2 {
		t.Fatalf("%d fsyncs for %d appenders, want 2 (one in flight, one shared)", got, appenders)
	}
}

// ensure that a record staged before its context is cancelled still gets the
// real outcome: its sequence, durable.
func TestStagedRecordIgnoresCancellation(t *testing.T) {
	gate := newSyncGate(vfs.OpSync)
	w := openMem(t, vfs.Inject(vfs.NewMem(), gate.hook), Options{})
	gate.armed.Store(true)
	first := appendAsync(context.Background(), w, testRecord(0, 10))
	<-gate.entered
	ctx, cancel := context.WithCancel(context.Background())
	second := appendAsync(ctx, w, testRecord(1, 10))
	pollUntil(t, "second record staged", func() bool { return w.staged() == 2 })
	cancel()
	close(gate.release)
	if r := <-first; r.err != nil || r.seq != 0 {
		t.Fatalf("first append = %d, %v", r.seq, r.err)
	}
	if r := <-second; r.err != nil || r.seq != 1 {
		t.Fatalf("cancelled-after-staging append = %d, %v; want 1, nil", r.seq, r.err)
	}
	checkRecords(t, readAll(t, w, 0), 0, []domain.IngressRecord{testRecord(0, 10), testRecord(1, 10)})
}

// ensure that the two staging buffers are reused: a steady stream of batches
// does not allocate a staging buffer per batch.
func TestStagingBuffersAreReused(t *testing.T) {
	w := openMem(t, vfs.NewMem(), Options{})
	rec := testRecord(0, 100) // one size, so no buffer needs to grow
	for range 4 {
		if _, err := w.Append(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	w.mu.Lock()
	bufs := map[*byte]bool{}
	for _, st := range []*stage{w.cur, w.spare} {
		bufs[unsafeFirst(st.buf)] = true
	}
	w.mu.Unlock()
	for range 20 {
		if _, err := w.Append(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, st := range []*stage{w.cur, w.spare} {
		if !bufs[unsafeFirst(st.buf)] {
			t.Fatal("a staging buffer was reallocated for a same-sized batch")
		}
	}
}

func unsafeFirst(b []byte) *byte {
	if cap(b) == 0 {
		return nil
	}
	return &b[:1][0]
}

// ensure that AppendMany's records stay consecutive when its batch rolls the
// segment between two records, and that no frame spans two segments.
func TestAppendManyRollsBetweenRecords(t *testing.T) {
	mem := vfs.NewMem()
	w := openMem(t, mem, Options{SegmentSizeMaxBytes: 400})
	recs := make([]domain.IngressRecord, 12)
	for i := range recs {
		recs[i] = testRecord(i, 60)
	}
	first, err := w.AppendMany(context.Background(), recs)
	if err != nil || first != 0 {
		t.Fatalf("AppendMany = %d, %v", first, err)
	}
	if n := len(segmentFiles(t, mem, testDir)); n < 3 {
		t.Fatalf("%d segments after a batch of %d bytes over 400-byte segments", n, 12*120)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	again := openMem(t, mem, Options{SegmentSizeMaxBytes: 400})
	checkRecords(t, readAll(t, again, 0), 0, recs)
}

// ensure that concurrent appends and AppendMany calls racing Close either
// succeed durably or fail with ErrClosed, never hang or get lost.
func TestAppendRacingClose(t *testing.T) {
	mem := vfs.NewMem()
	w := openMem(t, mem, Options{})
	var wg sync.WaitGroup
	var acked atomic.Int64
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				_, err := w.Append(context.Background(), testRecord(g*1000+i, 20))
				if errors.Is(err, domain.ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("Append: %v", err)
					return
				}
				acked.Add(1)
			}
		})
	}
	pollUntil(t, "some appends acked", func() bool { return acked.Load() > 50 })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	again := openMem(t, mem, Options{})
	if got := again.DurableNext(); got != uint64(acked.Load()) {
		t.Fatalf("reopened DurableNext %d, acked %d", got, acked.Load())
	}
}
