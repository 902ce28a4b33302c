package segmentlog

import (
	"container/list"
	"fmt"
	"slices"
	"sync"

	"github.com/narad/narad/adapters/vfs"
)

// frameCache is a log's LRU of decoded frames: at most frameCacheFramesMax
// frames and frameCacheBytesMax decoded bytes. A lookup finds the frame
// holding an offset, not only one starting there, so a reader that starts
// mid-frame (a consumer's next reserved offset) is served from memory
// without walking headers on disk. Entries are immutable and shared by every
// reader.
type frameCache struct {
	mu     sync.Mutex
	order  *list.List // front = most recent; values are *decodedFrame
	byOff  map[int64]*list.Element
	sorted []*decodedFrame // by base offset, for the lookup by offset held
	bytes  int
}

func newFrameCache() *frameCache {
	return &frameCache{order: list.New(), byOff: map[int64]*list.Element{}}
}

// get returns the cached frame holding off, if any.
func (c *frameCache) get(off int64) *decodedFrame {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := c.searchLocked(off+1) - 1 // the last frame starting at or below off
	if i < 0 || off >= c.sorted[i].end() {
		return nil
	}
	f := c.sorted[i]
	c.order.MoveToFront(c.byOff[f.base])
	return f
}

// searchLocked is the index of the first frame whose base is at least off.
func (c *frameCache) searchLocked(off int64) int {
	lo, hi := 0, len(c.sorted)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.sorted[m].base < off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

func (c *frameCache) put(f *decodedFrame) {
	if f.bytes > frameCacheBytesMax {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byOff[f.base]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.byOff[f.base] = c.order.PushFront(f)
	c.sorted = slices.Insert(c.sorted, c.searchLocked(f.base), f)
	c.bytes += f.bytes
	for c.order.Len() > frameCacheFramesMax || c.bytes > frameCacheBytesMax {
		old := c.order.Remove(c.order.Back()).(*decodedFrame)
		delete(c.byOff, old.base)
		c.sorted = slices.Delete(c.sorted, c.searchLocked(old.base), c.searchLocked(old.base)+1)
		c.bytes -= old.bytes
	}
}

// clear forgets every frame (a segment was deleted or the log closed).
func (c *frameCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Init()
	clear(c.byOff)
	clear(c.sorted)
	c.sorted = c.sorted[:0]
	c.bytes = 0
}

// hotSet keeps the descriptors and sparse indexes of at most hotIndexesMax
// sealed segments, least recently used out first. A handle in use is closed
// only when its last user releases it.
type hotSet struct {
	fsys  vfs.FS
	mu    sync.Mutex
	order *list.List // front = most recent; values are *hotHandle
	bySeg map[int64]*list.Element
}

type hotHandle struct {
	base    int64
	file    vfs.File
	idx     *sparseIndex
	refs    int
	evicted bool
}

func newHotSet(fsys vfs.FS) *hotSet {
	return &hotSet{fsys: fsys, order: list.New(), bySeg: map[int64]*list.Element{}}
}

// acquire returns seg's handle, opening the file and rebuilding its index
// from headers when it is cold. Release it when done.
func (h *hotSet) acquire(seg *segment, size int64) (*hotHandle, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e, ok := h.bySeg[seg.base]; ok {
		h.order.MoveToFront(e)
		hh := e.Value.(*hotHandle)
		hh.refs++
		return hh, nil
	}
	f, err := h.fsys.Open(seg.path)
	if err != nil {
		return nil, fmt.Errorf("open sealed segment: %w", err)
	}
	if size < 0 {
		if size, err = f.Size(); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("size of %s: %w", seg.path, err)
		}
	}
	idx, err := buildIndex(f, seg.base, size)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("index %s: %w", seg.path, err)
	}
	hh := &hotHandle{base: seg.base, file: f, idx: idx, refs: 1}
	h.insertLocked(hh)
	return hh, nil
}

// adopt makes an open file and its index hot (the active segment just
// sealed by a roll).
func (h *hotSet) adopt(base int64, f vfs.File, idx *sparseIndex) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.insertLocked(&hotHandle{base: base, file: f, idx: idx})
}

func (h *hotSet) insertLocked(hh *hotHandle) {
	h.bySeg[hh.base] = h.order.PushFront(hh)
	for e := h.order.Back(); h.order.Len() > hotIndexesMax && e != nil; {
		prev := e.Prev()
		if old := e.Value.(*hotHandle); old.refs == 0 {
			h.dropLocked(e)
		}
		e = prev
	}
}

func (h *hotSet) release(hh *hotHandle) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hh.refs--
	if hh.refs == 0 && hh.evicted {
		_ = hh.file.Close()
	}
}

// drop closes seg's handle (the segment is being deleted). The caller holds
// the log's segment lock exclusively, so nobody is using it.
func (h *hotSet) drop(base int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e, ok := h.bySeg[base]; ok {
		h.dropLocked(e)
	}
}

func (h *hotSet) dropLocked(e *list.Element) {
	hh := h.order.Remove(e).(*hotHandle)
	delete(h.bySeg, hh.base)
	hh.evicted = true
	if hh.refs == 0 {
		_ = hh.file.Close()
	}
}

// closeAll closes every handle (the log is closing).
func (h *hotSet) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for e := h.order.Front(); e != nil; e = h.order.Front() {
		h.dropLocked(e)
	}
}
