package wal

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/narad/narad/adapters/vfs"
)

// errSegmentGone: compaction removed the segment a read was about to open.
var errSegmentGone = errors.New("wal: segment removed by compaction")

// readHandle is a read-only descriptor of one segment, shared by the reads
// that hold a reference to it. The cache holds one reference while the
// handle is cached; the descriptor closes when the last reference goes.
type readHandle struct {
	seg  *segment
	f    vfs.File
	refs int // guarded by WAL.readMu
}

// acquireRead returns a read handle of seg: the cached one when it is seg's,
// else a freshly opened one that replaces it in the cache (the dispatcher
// reads one segment after the other, mostly the active one). Fails once the
// WAL is closed.
func (w *WAL) acquireRead(seg *segment) (*readHandle, error) {
	w.readMu.Lock()
	if w.readClosed {
		w.readMu.Unlock()
		return nil, w.errClosed("read")
	}
	if h := w.readCache; h != nil && h.seg == seg {
		h.refs++
		w.readMu.Unlock()
		return h, nil
	}
	w.readMu.Unlock()

	f, err := w.opts.FS.Open(seg.path)
	if err != nil && seg.isDeleted() && errors.Is(err, fs.ErrNotExist) {
		return nil, errSegmentGone
	}
	if err != nil {
		return nil, fmt.Errorf("open segment: %w", err)
	}
	h := &readHandle{seg: seg, f: f, refs: 1}
	w.readMu.Lock()
	defer w.readMu.Unlock()
	switch {
	case w.readClosed:
		_ = f.Close()
		return nil, w.errClosed("read")
	case seg.isDeleted():
		// Compaction removed seg meanwhile: use the handle once, uncached.
	default:
		old := w.readCache
		w.readCache = h
		h.refs++
		if old != nil {
			w.unrefLocked(old)
		}
	}
	return h, nil
}

// releaseRead drops a reference taken by acquireRead.
func (w *WAL) releaseRead(h *readHandle) {
	w.readMu.Lock()
	defer w.readMu.Unlock()
	w.unrefLocked(h)
}

// dropCachedRead uncaches seg's handle (all segments when seg is nil), so
// its descriptor closes once no read holds it. Compaction calls it for a
// deleted segment, Close for every one.
func (w *WAL) dropCachedRead(seg *segment) {
	w.readMu.Lock()
	defer w.readMu.Unlock()
	if seg == nil {
		w.readClosed = true
	}
	if h := w.readCache; h != nil && (seg == nil || h.seg == seg) {
		w.readCache = nil
		w.unrefLocked(h)
	}
}

func (w *WAL) unrefLocked(h *readHandle) {
	h.refs--
	if h.refs == 0 {
		_ = h.f.Close()
	}
}
