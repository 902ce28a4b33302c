package schedulefile

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/narad/narad/adapters/vfs"
)

// Open opens the bucket file at path. With create set a missing file is
// created, fdatasynced, and its directory synced, so the entry survives a
// machine crash; without it a missing file is an error wrapping
// fs.ErrNotExist. Open reads every frame, cuts the torn or unacknowledged
// tail (doc.go, Format), fdatasyncs the file (it may hold frames only a
// killed process's page cache has, and the caller acts on what it reads),
// and returns the bucket with the entries of the records not fired, in
// file order.
func Open(fsys vfs.FS, path string, create bool) (*Bucket, []Entry, error) {
	f, created, err := openFile(fsys, path, create)
	if err != nil {
		return nil, nil, fmt.Errorf("schedulefile: open %s: %w", path, err)
	}
	b := &Bucket{fsys: fsys, path: path, f: f, entryDurable: created}
	entries, err := b.load()
	if err == nil && created {
		err = b.syncDir()
	}
	if err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("schedulefile: open %s: %w", path, err)
	}
	return b, entries, nil
}

// openFile opens path for reading and writing, creating it when create is
// set and it is missing; created says which.
func openFile(fsys vfs.FS, path string, create bool) (f vfs.File, created bool, err error) {
	f, err = fsys.OpenRW(path)
	if err == nil || !create || !errors.Is(err, fs.ErrNotExist) {
		return f, false, err
	}
	f, err = fsys.Create(path)
	return f, err == nil, err
}

// load reads the file's frames, cuts everything past the good end, makes
// the file durable and sets b's counts. It returns the entries of the
// acknowledged records not fired.
func (b *Bucket) load() ([]Entry, error) {
	size, err := b.f.Size()
	if err != nil {
		return nil, fmt.Errorf("size: %w", err)
	}
	t, err := scanFile(b.f, size)
	if err != nil {
		return nil, err
	}
	if size > t.good {
		if err := b.f.Truncate(t.good); err != nil {
			return nil, fmt.Errorf("cut the torn tail at %d of %d bytes: %w", t.good, size, err)
		}
	}
	if err := b.f.Sync(); err != nil {
		return nil, fmt.Errorf("sync: %w", err)
	}
	entries := t.pending()
	b.end, b.syncedEnd = t.good, t.good
	b.records, b.pending = len(t.records), len(entries)
	b.fired = t.fired
	b.fired.grow(b.records)
	return entries, nil
}

// syncDir makes the file's directory entry durable.
func (b *Bucket) syncDir() error {
	if err := b.fsys.SyncDir(filepath.Dir(b.path)); err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	b.entryDurable = true
	return nil
}

// ready prepares the file for a write at the good end: it cuts what a
// failed write or sync left, and for an Append (durable set) makes the
// directory entry durable when another Open created the file (that Open
// may have failed, or its process died, before its directory sync).
func (b *Bucket) ready(durable bool) error {
	if b.dirty {
		if err := b.recover(); err != nil {
			return err
		}
	}
	if durable && !b.entryDurable {
		return b.syncDir()
	}
	return nil
}

// recover cuts the bytes a failed write or sync left past the good end and
// syncs the cut. After a failed fdatasync the page cache is no witness to
// what reached the disk (the kernel may drop the pages it failed to
// write), so the cut goes back to the end of the last good sync, which
// takes the fired frames written since with it: they are written anew, as
// fired frames naming every ordinal fired so far, and synced with the cut.
func (b *Bucket) recover() error {
	cutAt := b.end
	if b.syncFailed {
		cutAt = b.syncedEnd
	}
	if err := b.f.Truncate(cutAt); err != nil {
		return fmt.Errorf("cut back to %d bytes: %w", cutAt, err)
	}
	b.end = cutAt
	if b.syncFailed && b.pending < b.records {
		buf := appendFiredFrames(b.buf[:0], b.firedOrdinals())
		defer b.keep(buf)
		if _, err := b.f.WriteAt(buf, b.end); err != nil {
			return fmt.Errorf("write the fired ordinals anew at %d: %w", b.end, err)
		}
		b.end += int64(len(buf))
	}
	if err := b.f.Sync(); err != nil {
		b.syncFailed = true
		return fmt.Errorf("sync the cut at %d: %w", cutAt, err)
	}
	b.syncedEnd = b.end
	b.dirty, b.syncFailed = false, false
	return nil
}

// firedOrdinals lists the ordinals fired so far, in order.
func (b *Bucket) firedOrdinals() []uint32 {
	out := make([]uint32, 0, b.records-b.pending)
	for o := range uint32(b.records) {
		if b.fired.has(o) {
			out = append(out, o)
		}
	}
	return out
}
