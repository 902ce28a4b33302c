package schedulefile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

const (
	partDir  = "/data/topics/orders/p00000"
	bucketMs = int64(1_700_000_040_000)
)

var bucketPath = filepath.Join(partDir, Name(bucketMs))

// newMem is a MemFS holding the partition directory.
func newMem(t *testing.T) *vfs.MemFS {
	t.Helper()
	mem := vfs.NewMem()
	must(t, mem.MkdirAll(partDir))
	return mem
}

func mustOpen(t *testing.T, fsys vfs.FS, create bool) (*Bucket, []Entry) {
	t.Helper()
	b, entries, err := Open(fsys, bucketPath, create)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b, entries
}

func mustAppend(t *testing.T, b *Bucket, recs []domain.Record) []Entry {
	t.Helper()
	entries, err := b.Append(recs)
	if err != nil {
		t.Fatalf("append %d records: %v", len(recs), err)
	}
	return entries
}

func rec(at int64, key, payload string) domain.Record {
	r := domain.Record{DeliverAtMs: at, Payload: []byte(payload)}
	if key != "" {
		r.Key = []byte(key)
	}
	return r
}

// sched is a record the test knows by ordinal: what Append took.
type sched struct {
	ordinal uint32
	rec     domain.Record
}

// wantEntries checks that entries name exactly want, in order, and that
// each reads back to its record's exact bytes.
func wantEntries(t *testing.T, what string, b *Bucket, entries []Entry, want []sched) {
	t.Helper()
	if err := checkEntries(b, entries, want); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func checkEntries(b *Bucket, entries []Entry, want []sched) error {
	if len(entries) != len(want) {
		return fmt.Errorf("%d entries %v, want %d", len(entries), ordinalsOf(entries), len(want))
	}
	for i, e := range entries {
		w := want[i]
		if e.Ordinal != w.ordinal || e.DeliverAtMs != w.rec.DeliverAtMs {
			return fmt.Errorf("entry %d is %+v, want ordinal %d deliver at %d", i, e, w.ordinal, w.rec.DeliverAtMs)
		}
		got, err := b.Read(e)
		if err != nil {
			return fmt.Errorf("read entry %d: %w", i, err)
		}
		if !sameRecord(got, w.rec) {
			return fmt.Errorf("entry %d reads %+v, want %+v", i, got, w.rec)
		}
	}
	return nil
}

// sameRecord compares what a bucket keeps: DeliverAtMs, Key (nil when
// empty) and Payload.
func sameRecord(got, want domain.Record) bool {
	wantKey := want.Key
	if len(wantKey) == 0 {
		wantKey = nil
	}
	return got.DeliverAtMs == want.DeliverAtMs && bytes.Equal(got.Payload, want.Payload) &&
		(got.Key == nil) == (wantKey == nil) && bytes.Equal(got.Key, wantKey) &&
		got.Offset == 0 && got.CommittedAtMs == 0
}

func ordinalsOf(entries []Entry) []uint32 {
	out := make([]uint32, len(entries))
	for i, e := range entries {
		out[i] = e.Ordinal
	}
	return out
}

// numbered pairs recs with ordinals from first.
func numbered(first uint32, recs ...domain.Record) []sched {
	out := make([]sched, len(recs))
	for i, r := range recs {
		out[i] = sched{ordinal: first + uint32(i), rec: r}
	}
	return out
}

func fileBytes(t *testing.T, fsys vfs.FS) []byte {
	t.Helper()
	b, err := vfs.ReadFile(fsys, bucketPath)
	must(t, err)
	return b
}

func fileSize(t *testing.T, fsys vfs.FS) int64 {
	t.Helper()
	fi, err := fsys.Stat(bucketPath)
	must(t, err)
	return fi.Size()
}

// writeFile replaces the bucket file with b, durably.
func writeFile(t *testing.T, fsys vfs.FS, b []byte) {
	t.Helper()
	if err := fsys.Remove(bucketPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	f, err := fsys.Create(bucketPath)
	must(t, err)
	_, err = f.WriteAt(b, 0)
	must(t, err)
	must(t, f.Sync())
	must(t, f.Close())
	must(t, fsys.SyncDir(partDir))
}

func wantErr(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got %v, want %v", what, err, target)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
