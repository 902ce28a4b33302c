package schedulefile

import (
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// ensure that what a failed Append wrote (a batch whose sync failed, or
// one whose write failed) is cut before the next write lands, whether
// that is an Append or a MarkFired, so no byte of it stays past the good
// end, and that the failed batch is not acknowledged.
func TestFailedAppendIsCut(t *testing.T) {
	for _, op := range []vfs.Op{vfs.OpSync, vfs.OpWrite} {
		for _, next := range []string{"append", "mark fired"} {
			what := next + " after a failed " + map[vfs.Op]string{vfs.OpSync: "sync", vfs.OpWrite: "write"}[op]
			mem := newMem(t)
			faults := &vfs.Faults{}
			b, _ := mustOpen(t, vfs.Inject(mem, faults.Hook), true)
			first := []domain.Record{rec(1, "k", "one"), rec(2, "", "two")}
			mustAppend(t, b, first)
			good := b.Size()
			faults.FailNext(op, ".bucket")
			_, err := b.Append([]domain.Record{rec(3, "long", "a failed batch, longer than what comes next")})
			wantErr(t, err, vfs.ErrInjected, what)
			if b.Size() != good || b.Records() != 2 {
				t.Fatalf("%s: a failed Append moved Size to %d, Records to %d", what, b.Size(), b.Records())
			}
			want := numbered(0, first...)
			if next == "append" {
				mustAppend(t, b, []domain.Record{rec(4, "", "x")})
				want = append(want, numbered(2, rec(4, "", "x"))...)
			} else {
				must(t, b.MarkFired([]uint32{1}))
				want = want[:1]
			}
			if fileSize(t, mem) != b.Size() {
				t.Fatalf("%s: the file is %d bytes, the good end %d", what, fileSize(t, mem), b.Size())
			}
			must(t, b.Close())
			b, entries := mustOpen(t, mem, false)
			wantEntries(t, what, b, entries, want)
		}
	}
}

// ensure that a failed cut fails the write that needed it and the next
// write cuts again.
func TestFailedCutIsRetried(t *testing.T) {
	mem := newMem(t)
	faults := &vfs.Faults{}
	b, _ := mustOpen(t, vfs.Inject(mem, faults.Hook), true)
	mustAppend(t, b, []domain.Record{rec(1, "", "one")})
	faults.FailNext(vfs.OpSync, ".bucket")
	_, err := b.Append([]domain.Record{rec(2, "", "two, failed")})
	wantErr(t, err, vfs.ErrInjected, "append with a failing sync")
	faults.FailNext(vfs.OpTruncate, ".bucket")
	wantErr(t, b.MarkFired([]uint32{0}), vfs.ErrInjected, "mark fired with a failing cut")
	faults.FailNext(vfs.OpSync, ".bucket")
	_, err = b.Append([]domain.Record{rec(3, "", "three, failed")})
	wantErr(t, err, vfs.ErrInjected, "append with a failing sync of the cut")
	recs := []domain.Record{rec(4, "", "four")}
	mustAppend(t, b, recs)
	if fileSize(t, mem) != b.Size() || b.Records() != 2 || b.Pending() != 2 {
		t.Fatalf("file %d bytes, Size %d, %d records, %d pending", fileSize(t, mem), b.Size(), b.Records(), b.Pending())
	}
	crashed, entries := mustOpen(t, mem.Crash(vfs.CrashOptions{}), false)
	wantEntries(t, "after a crash", crashed, entries, append(numbered(0, rec(1, "", "one")), numbered(1, recs...)...))
}

// ensure that fired frames written before a failed fdatasync are written
// anew before the next Append is acknowledged: after a failed fdatasync
// the kernel may have dropped those pages (they read back from the page
// cache but never reach the disk), and a hole of zeros where they stood
// would end the file there, acknowledged records after it included.
func TestFailedSyncWritesFiredAnew(t *testing.T) {
	mem := newMem(t)
	faults := &vfs.Faults{}
	gate := &gateFS{FS: vfs.Inject(mem, faults.Hook)}
	b, _ := mustOpen(t, gate, true)
	first := []domain.Record{rec(1, "", "zero"), rec(1, "", "one")}
	mustAppend(t, b, first)
	must(t, b.MarkFired([]uint32{0}))
	faults.FailNext(vfs.OpSync, ".bucket")
	_, err := b.Append([]domain.Record{rec(2, "", "failed")})
	wantErr(t, err, vfs.ErrInjected, "append with a failing sync")
	later := []domain.Record{rec(3, "", "acknowledged after the failure")}
	mustAppend(t, b, later)
	img := gate.crash(t, mem)
	crashed, entries := mustOpen(t, img, false)
	wantEntries(t, "after a crash", crashed, entries, append(numbered(1, first[1]), numbered(2, later...)...))
}

// gateFS simulates a kernel that, on a failed fdatasync, marks the dirty
// pages clean without writing them: their bytes stay lost to the disk
// until written again, whatever later syncs do. crash zeroes them in a
// crash image. One file, one process.
type gateFS struct {
	vfs.FS
	synced int64      // the file's length at its last good sync
	lost   [][2]int64 // byte ranges dropped by failed syncs, not written since
}

func (g *gateFS) Create(name string) (vfs.File, error) { return g.wrap(g.FS.Create(name)) }
func (g *gateFS) OpenRW(name string) (vfs.File, error) { return g.wrap(g.FS.OpenRW(name)) }

func (g *gateFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &gateFile{File: f, g: g}, nil
}

// crash is mem's crash image with the lost bytes zeroed.
func (g *gateFS) crash(t *testing.T, mem *vfs.MemFS) *vfs.MemFS {
	t.Helper()
	img := mem.Crash(vfs.CrashOptions{})
	size := fileSize(t, img)
	for _, r := range g.lost {
		if end := min(r[1], size); r[0] < end {
			must(t, vfs.Zero(img, bucketPath, r[0], end-r[0]))
		}
	}
	return img
}

// keep drops from the lost ranges the bytes in [from, to).
func (g *gateFS) keep(from, to int64) {
	var out [][2]int64
	for _, r := range g.lost {
		if r[0] < from {
			out = append(out, [2]int64{r[0], min(r[1], from)})
		}
		if r[1] > to {
			out = append(out, [2]int64{max(r[0], to), r[1]})
		}
	}
	g.lost = out
}

type gateFile struct {
	vfs.File
	g *gateFS
}

func (f *gateFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	f.g.keep(off, off+int64(n))
	return n, err
}

func (f *gateFile) Truncate(size int64) error {
	err := f.File.Truncate(size)
	if err == nil {
		f.g.keep(size, 1<<62)
		f.g.synced = min(f.g.synced, size)
	}
	return err
}

func (f *gateFile) Sync() error {
	size, err := f.File.Size()
	if err != nil {
		return err
	}
	if err := f.File.Sync(); err != nil {
		f.g.lost = append(f.g.lost, [2]int64{f.g.synced, size})
		return err
	}
	f.g.synced = size
	return nil
}

// ensure that the cut after a failed fdatasync is itself made durable: a
// sync may fail after the batch reached the disk, and a cut only in the
// page cache would let a crash bring the unacknowledged batch back.
func TestCutIsDurable(t *testing.T) {
	mem := newMem(t)
	late := &lateFailFS{FS: mem}
	b, _ := mustOpen(t, late, true)
	recs := []domain.Record{rec(1, "", "kept")}
	mustAppend(t, b, recs)
	late.failNext = true
	_, err := b.Append([]domain.Record{rec(2, "", "synced, yet reported failed")})
	wantErr(t, err, vfs.ErrInjected, "append whose sync fails late")
	must(t, b.MarkFired([]uint32{0}))
	crashed, entries := mustOpen(t, mem.Crash(vfs.CrashOptions{}), false)
	wantEntries(t, "after a crash", crashed, entries, numbered(0, recs...))
}

// lateFailFS fails the next Sync after it reached the disk.
type lateFailFS struct {
	vfs.FS
	failNext bool
}

func (l *lateFailFS) Create(name string) (vfs.File, error) { return l.wrap(l.FS.Create(name)) }
func (l *lateFailFS) OpenRW(name string) (vfs.File, error) { return l.wrap(l.FS.OpenRW(name)) }

func (l *lateFailFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &lateFailFile{File: f, fs: l}, nil
}

type lateFailFile struct {
	vfs.File
	fs *lateFailFS
}

func (f *lateFailFile) Sync() error {
	if err := f.File.Sync(); err != nil || !f.fs.failNext {
		return err
	}
	f.fs.failNext = false
	return vfs.ErrInjected
}
