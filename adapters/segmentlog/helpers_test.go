package segmentlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// fakeClock is a settable clock for retention and eviction tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

const testID domain.TopicID = "0123456789abcdef"

func testRef(partition int32) domain.PartitionRef {
	return domain.PartitionRef{Topic: "orders", TopicID: testID, Partition: partition}
}

// testOptions returns options on fsys with a fake clock and background loops
// that never fire on their own during a test.
func testOptions(fsys vfs.FS, clock *fakeClock) Options {
	return Options{FS: fsys, DataDir: "/data", Now: clock.Now, ReapInterval: time.Hour, EvictScanInterval: time.Hour}
}

func mustOpen(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// batch returns n JSON-like records tagged with seed.
func batch(seed, n int) []domain.Record {
	recs := make([]domain.Record, n)
	for i := range recs {
		k := seed*10_000 + i
		recs[i] = domain.Record{
			Key:           []byte(fmt.Sprintf("user-%d", k%17)),
			Payload:       []byte(fmt.Sprintf(`{"id":%d,"seed":%d,"pad":"%s"}`, k, seed, bytes.Repeat([]byte{'x'}, k%50))),
			CommittedAtMs: 1_700_000_000_000 + int64(k),
		}
	}
	return recs
}

func mustCommit(t *testing.T, s *Store, ref domain.PartitionRef, recs []domain.Record) int64 {
	t.Helper()
	first, err := s.CommitDurable(context.Background(), ref, recs)
	if err != nil {
		t.Fatalf("CommitDurable: %v", err)
	}
	return first
}

// checkRange fails t unless offsets [first, first+len(want)) read back as
// want's keys and payloads.
func checkRange(t *testing.T, s *Store, ref domain.PartitionRef, first int64, want []domain.Record) {
	t.Helper()
	got, err := s.Read(context.Background(), ref, first, len(want), 0)
	if err != nil {
		t.Fatalf("Read(%d): %v", first, err)
	}
	if len(got) != len(want) {
		t.Fatalf("Read(%d) returned %d records, want %d", first, len(got), len(want))
	}
	for i, r := range got {
		if r.Offset != first+int64(i) || !bytes.Equal(r.Key, want[i].Key) || !bytes.Equal(r.Payload, want[i].Payload) {
			t.Fatalf("offset %d: got offset %d key %q payload %q; want key %q payload %q",
				first+int64(i), r.Offset, r.Key, r.Payload, want[i].Key, want[i].Payload)
		}
	}
}

func wantErr(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %v, want %v", what, err, target)
	}
}

func partDir(ref domain.PartitionRef) string {
	return filepath.Join("/data", topicsDirName, ref.Topic, partitionDirName(ref.Partition))
}

func segPath(ref domain.PartitionRef, base int64) string {
	return filepath.Join(partDir(ref), segmentName(base))
}

// hwmBounds returns the high watermark of ref's log, opened (a peek at a
// closed log answers the hwm file, which is exact only for a clean close).
func hwmBounds(t *testing.T, s *Store, ref domain.PartitionRef) int64 {
	t.Helper()
	_, _ = s.Read(context.Background(), ref, 0, 1, 0)
	b, err := s.Bounds(ref)
	if err != nil {
		t.Fatalf("Bounds: %v", err)
	}
	return b.HighWatermark
}

// pollUntil polls cond until it holds or the deadline passes.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not synchronisation
	}
}
