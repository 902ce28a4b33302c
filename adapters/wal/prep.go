package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sync/atomic"

	"github.com/narad/narad/adapters/vfs"
)

// A prepared segment (spec 2.6, opt-in) is a segment file made in advance:
// limit zero bytes, then the 16-byte trailer (magic, limit as big-endian
// u64), so the file is limit+16 bytes. Frames are written over the zeros
// from offset 0 and never at or past limit; the data end is where the first
// zero header starts. The roll that seals it trims it to its data.

// errPrepStopped ends a preparation cut short by Close.
var errPrepStopped = errors.New("wal: segment preparation stopped")

// preparer runs the background task that prepares the next segment. It is
// used by the sync loop alone (and by Close once the loop has exited).
type preparer struct {
	fsys  vfs.FS
	dir   string
	limit int64
	on    bool

	stop  chan struct{} // closed at Close: a running preparation gives up
	done  chan error    // non-nil while a preparation runs or its result is unread
	tried bool          // a preparation was started for the current segment
	made  atomic.Int64  // spares completed (tests poll it)
}

func newPreparer(fsys vfs.FS, dir string, limit int64, on bool) *preparer {
	return &preparer{fsys: fsys, dir: dir, limit: limit, on: on, stop: make(chan struct{})}
}

func (p *preparer) path() string { return filepath.Join(p.dir, prepFileName) }

// maybeStart starts preparing the next segment once the active one holds
// half its limit, at most once per segment and never while a spare is being
// made or waits unused.
func (p *preparer) maybeStart(activeSize int64) {
	if !p.on || p.tried || p.done != nil || activeSize < p.limit/2 {
		return
	}
	p.tried = true
	done := make(chan error, 1)
	p.done = done
	go func() {
		err := p.prepare()
		if err == nil {
			p.made.Add(1)
		}
		done <- err
	}()
}

// take reports whether a finished spare is ready at path(); a failed
// preparation is dropped (the roll then creates an empty segment). A
// preparation still running is left to finish for a later roll.
func (p *preparer) take() bool {
	p.tried = false
	if p.done == nil {
		return false
	}
	select {
	case err := <-p.done:
		p.done = nil
		return err == nil
	default:
		return false
	}
}

// close stops a running preparation, waits for it and removes the spare.
func (p *preparer) close() {
	close(p.stop)
	if p.done != nil {
		<-p.done
		p.done = nil
	}
	if p.on {
		_ = p.fsys.Remove(p.path())
	}
}

// prepare creates the spare: zeros up to the limit, the trailer, fdatasync.
// A failure removes the partial file.
func (p *preparer) prepare() (err error) {
	path := p.path()
	if rerr := p.fsys.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		return fmt.Errorf("remove stale %s: %w", path, rerr)
	}
	f, err := p.fsys.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer func() {
		err = errors.Join(err, f.Close())
		if err != nil {
			_ = p.fsys.Remove(path)
		}
	}()
	if err := zeroRange(f, 0, p.limit, p.stop); err != nil {
		return err
	}
	if _, err := f.WriteAt(prepTrailer(p.limit), p.limit); err != nil {
		return fmt.Errorf("write trailer of %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}

// prepTrailer is the 16-byte trailer of a prepared segment with this limit.
func prepTrailer(limit int64) []byte {
	return binary.BigEndian.AppendUint64([]byte(prepTrailerMagic), uint64(limit))
}

// preparedLimit returns the write limit of a file of this size that ends in
// a preparation trailer naming size-16 as its limit; ok is false otherwise.
func preparedLimit(r io.ReaderAt, size int64) (limit int64, ok bool, err error) {
	if size < prepTrailerBytes {
		return 0, false, nil
	}
	var b [prepTrailerBytes]byte
	if n, err := r.ReadAt(b[:], size-prepTrailerBytes); n < len(b) {
		return 0, false, fmt.Errorf("read trailer: %w", errOr(err, io.ErrUnexpectedEOF))
	}
	limit = size - prepTrailerBytes
	if string(b[:8]) != prepTrailerMagic || binary.BigEndian.Uint64(b[8:]) != uint64(limit) {
		return 0, false, nil
	}
	return limit, true, nil
}

// zeroRange writes zeros over [from, to) in chunks, giving up when stop is
// closed (nil never stops).
func zeroRange(f vfs.File, from, to int64, stop <-chan struct{}) error {
	zeros := make([]byte, min(prepChunkBytes, max(to-from, 0)))
	for off := from; off < to; {
		select {
		case <-stop:
			return errPrepStopped
		default:
		}
		n := min(int64(len(zeros)), to-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return fmt.Errorf("zero %d bytes at %d of %s: %w", n, off, f.Name(), err)
		}
		off += n
	}
	return nil
}

// nonZeroEnd returns the end of the last non-zero byte in [from, to), or from
// when the range is all zeros. It reads backwards, so junk near the end is
// found without reading the whole range.
func nonZeroEnd(r io.ReaderAt, from, to int64) (int64, error) {
	buf := make([]byte, min(prepChunkBytes, max(to-from, 0)))
	for end := to; end > from; {
		start := max(from, end-int64(len(buf)))
		chunk := buf[:end-start]
		if n, err := r.ReadAt(chunk, start); n < len(chunk) {
			return 0, fmt.Errorf("read %d bytes at %d: %w", len(chunk), start, errOr(err, io.ErrUnexpectedEOF))
		}
		for i := len(chunk) - 1; i >= 0; i-- {
			if chunk[i] != 0 {
				return start + int64(i) + 1, nil
			}
		}
		end = start
	}
	return from, nil
}

// installPrepared renames the ready spare into place as the segment based at
// base, fsyncs the directory and opens it. Like a create, it refuses to
// replace an existing segment.
func installPrepared(fsys vfs.FS, dir string, base uint64) (vfs.File, error) {
	path := segmentPath(dir, base)
	if _, err := fsys.Stat(path); err == nil {
		return nil, fmt.Errorf("install prepared segment: %s: %w", path, fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("install prepared segment: stat %s: %w", path, err)
	}
	if err := fsys.Rename(filepath.Join(dir, prepFileName), path); err != nil {
		return nil, fmt.Errorf("install prepared segment %s: %w", path, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return nil, fmt.Errorf("sync directory %s after installing %s: %w", dir, path, err)
	}
	f, err := fsys.OpenRW(path)
	if err != nil {
		return nil, fmt.Errorf("open prepared segment: %w", err)
	}
	return f, nil
}

// truncateSynced cuts f at end and makes the cut durable: a torn tail of an
// ordinary segment, or a prepared segment trimmed to its data.
func truncateSynced(f vfs.File, end int64, why string) error {
	if err := f.Truncate(end); err != nil {
		return fmt.Errorf("truncate %s at %d (%s): %w", f.Name(), end, why, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s after truncating it (%s): %w", f.Name(), why, err)
	}
	return nil
}
