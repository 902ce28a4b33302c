package wal

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// testDir is the WAL directory used on MemFS.
const testDir = "/data/ingress/produce"

// waitBound bounds every poll of the tests.
const waitBound = 10 * time.Second

func openMem(t *testing.T, fsys vfs.FS, opts Options) *WAL {
	t.Helper()
	opts.FS = fsys
	if opts.Dir == "" {
		opts.Dir = testDir
	}
	w, err := Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

func testRecord(i int, payloadBytes int) domain.IngressRecord {
	p := make([]byte, payloadBytes)
	for j := range p {
		p[j] = byte(i + j*7)
	}
	rec := domain.IngressRecord{Topic: fmt.Sprintf("t%d", i%4), Partition: int32(i % 3), CreatedAtMs: int64(i), Payload: p}
	if i%2 == 1 {
		rec.Key = []byte(fmt.Sprint(i))
		rec.TopicID = "00112233445566ff"
	}
	return rec
}

func mustAppendN(t *testing.T, w *WAL, n, payloadBytes int) []domain.IngressRecord {
	t.Helper()
	recs := make([]domain.IngressRecord, n)
	for i := range recs {
		recs[i] = testRecord(i, payloadBytes)
		if _, err := w.Append(context.Background(), recs[i]); err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
	}
	return recs
}

func readAll(t *testing.T, w *WAL, from uint64) []ports.WALEntry {
	t.Helper()
	got, err := w.ReadFrom(from, 1<<30)
	if err != nil {
		t.Fatalf("ReadFrom(%d): %v", from, err)
	}
	return got
}

func checkRecords(t *testing.T, got []ports.WALEntry, first uint64, want []domain.IngressRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d entries, want %d", len(got), len(want))
	}
	for i, e := range got {
		if e.Seq != first+uint64(i) || !sameRecord(e.Record, want[i]) {
			t.Fatalf("entry %d: seq %d %+v, want seq %d %+v", i, e.Seq, e.Record, first+uint64(i), want[i])
		}
	}
}

func sameRecord(a, b domain.IngressRecord) bool {
	return a.Topic == b.Topic && a.TopicID == b.TopicID && string(a.Key) == string(b.Key) &&
		a.Partition == b.Partition && a.CreatedAtMs == b.CreatedAtMs && string(a.Payload) == string(b.Payload) &&
		a.DeliverAtMs == b.DeliverAtMs
}

// pollUntil polls cond until it holds or waitBound passes.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %v", what, waitBound)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// staged reports how many sequences have been handed out (staged or durable).
func (w *WAL) staged() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.nextSeq
}

// segmentFiles lists the segment file names in dir.
func segmentFiles(t *testing.T, fsys vfs.FS, dir string) []string {
	t.Helper()
	names, err := fsys.List(dir)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var segs []string
	for _, n := range names {
		if _, ok := parseSegmentName(n); ok {
			segs = append(segs, n)
		}
	}
	return segs
}

func lastSegmentPath(t *testing.T, fsys vfs.FS, dir string) string {
	t.Helper()
	segs := segmentFiles(t, fsys, dir)
	return filepath.Join(dir, segs[len(segs)-1])
}

// opLog is a vfs hook recording every operation, optionally delegating.
type opLog struct {
	mu   sync.Mutex
	ops  []loggedOp
	next vfs.Hook
}

type loggedOp struct {
	op   vfs.Op
	name string
}

func (l *opLog) hook(op vfs.Op, name string) error {
	l.mu.Lock()
	l.ops = append(l.ops, loggedOp{op, name})
	l.mu.Unlock()
	if l.next != nil {
		return l.next(op, name)
	}
	return nil
}

func (l *opLog) snapshot() []loggedOp {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]loggedOp(nil), l.ops...)
}
