package wal

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.IngressWAL = (*WAL)(nil)

// Options configures Open. Only Dir is required.
type Options struct {
	// FS is the filesystem; nil means vfs.OS{}.
	FS vfs.FS
	// Dir is the WAL directory (<data>/ingress/produce); created if missing.
	Dir string
	// SegmentSizeMaxBytes overrides the 64 MiB roll size (tests).
	SegmentSizeMaxBytes int64
	// SyncInterval overrides the 10 ms sync-loop backstop (tests).
	SyncInterval time.Duration
	// CheckpointFlushInterval overrides the 250 ms checkpoint flush bound.
	CheckpointFlushInterval time.Duration
	// Prealloc turns on segment preparation (storage.ingress_wal_prealloc,
	// spec 2.6): the next segment is zero-filled in the background once the
	// active one is half full.
	Prealloc bool
}

func (o Options) withDefaults() Options {
	if o.FS == nil {
		o.FS = vfs.OS{}
	}
	if o.SegmentSizeMaxBytes <= 0 {
		o.SegmentSizeMaxBytes = segmentSizeMaxBytes
	}
	if o.SyncInterval <= 0 {
		o.SyncInterval = syncBackstopInterval
	}
	if o.CheckpointFlushInterval <= 0 {
		o.CheckpointFlushInterval = checkpointFlushInterval
	}
	return o
}

// WAL is the node's ingress write-ahead log. Safe for concurrent use.
type WAL struct {
	opts Options

	// mu guards staging, the durable frontier and the segment list. It is
	// never held across file I/O.
	mu           sync.Mutex
	cur, spare   *stage // cur fills; spare is the other buffer (nil while in flight)
	nextSeq      uint64 // next sequence to stage
	stageSegSize int64  // size the active segment will have once cur is written
	durableNext  uint64
	durableCh    chan struct{}
	segments     []*segment // ascending by base; the last is active
	activeEnd    int64      // durable data end of the active segment
	closed       bool
	failErr      error // the latched disk failure, wraps domain.ErrWALFailed
	failed       atomic.Bool

	// commitMu is the commit turn: whoever holds it (the sync loop, or an
	// appender that found it free, commit.go) detaches, writes and syncs
	// the staged buffer. The fields below belong to its holder.
	commitMu    sync.Mutex
	active      vfs.File
	activeSize  int64 // data end of the active segment, where the next write goes
	activeLimit int64 // write limit of a prepared active segment; 0 if ordinary
	prep        *preparer

	cp        *checkpoint
	compactMu sync.Mutex // one compaction at a time

	// readMu guards the cached read descriptor (readcache.go).
	readMu     sync.Mutex
	readCache  *readHandle
	readClosed bool

	poke        chan struct{} // capacity 1, non-blocking sends
	loopWakes   atomic.Uint64 // sync-loop wake-ups (tests)
	stopLoop    chan struct{}
	loopDone    chan struct{}
	stopFlusher chan struct{}
	flusherDone chan struct{}
	closeOnce   sync.Once
	closeErr    error
}

// Open replays the WAL in opts.Dir (spec 2.7) and starts its sync loop and
// checkpoint flusher. It refuses a WAL with damage other than a torn tail of
// the last segment (*CorruptionError, ErrCorrupt), a checkpoint file of the
// wrong size (ErrCorrupt) and a checkpoint past the log's end
// (ErrCheckpointAhead).
func Open(opts Options) (*WAL, error) {
	opts = opts.withDefaults()
	if opts.Dir == "" {
		return nil, errors.New("wal: open: empty directory")
	}
	if err := opts.FS.MkdirAll(opts.Dir); err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", opts.Dir, err)
	}
	cpValue, cpExists, err := readCheckpoint(opts.FS, opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", opts.Dir, err)
	}
	rep, err := replay(opts.FS, opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", opts.Dir, err)
	}
	if cpValue > rep.nextSeq {
		_ = rep.active.Close()
		return nil, fmt.Errorf("wal: open %s: checkpoint %d, next sequence %d: %w",
			opts.Dir, cpValue, rep.nextSeq, ErrCheckpointAhead)
	}
	cp, err := openCheckpoint(opts.FS, opts.Dir, cpValue, cpExists)
	if err != nil {
		_ = rep.active.Close()
		return nil, fmt.Errorf("wal: open %s: %w", opts.Dir, err)
	}
	w := newWAL(opts, rep, cp)
	go w.syncLoop()
	go w.checkpointFlusher()
	return w, nil
}

func newWAL(opts Options, rep replayed, cp *checkpoint) *WAL {
	return &WAL{
		opts:         opts,
		cur:          &stage{},
		spare:        &stage{},
		nextSeq:      rep.nextSeq,
		stageSegSize: rep.activeSize,
		durableNext:  rep.nextSeq,
		durableCh:    make(chan struct{}),
		segments:     rep.segments,
		activeEnd:    rep.activeSize,
		active:       rep.active,
		activeSize:   rep.activeSize,
		activeLimit:  rep.activeLimit,
		prep:         newPreparer(opts.FS, opts.Dir, opts.SegmentSizeMaxBytes, opts.Prealloc),
		cp:           cp,
		poke:         make(chan struct{}, 1),
		stopLoop:     make(chan struct{}),
		loopDone:     make(chan struct{}),
		stopFlusher:  make(chan struct{}),
		flusherDone:  make(chan struct{}),
	}
}

// DurableNext is the first sequence not yet durable.
func (w *WAL) DurableNext() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.durableNext
}

// Durable returns a channel closed the next time DurableNext moves or the WAL
// closes.
func (w *WAL) Durable() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.durableCh
}

// Failed reports whether a write or fsync failure has latched the WAL (the
// narad_ingress_wal_failed gauge).
func (w *WAL) Failed() bool { return w.failed.Load() }

// advanceDurable moves the durable frontier to next, whose frames end at
// byte end of the active segment, and wakes waiters.
func (w *WAL) advanceDurable(next uint64, end int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.activeEnd = end
	if next <= w.durableNext {
		return
	}
	w.durableNext = next
	close(w.durableCh)
	w.durableCh = make(chan struct{})
}

// Close stops the sync loop after it completed every staged record, flushes
// the checkpoint and closes the files. Idempotent; later appends fail with
// domain.ErrClosed.
func (w *WAL) Close() error {
	w.closeOnce.Do(func() {
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		close(w.stopLoop)
		<-w.loopDone
		w.prep.close()
		w.dropCachedRead(nil)
		close(w.stopFlusher)
		<-w.flusherDone
		errs := []error{w.cp.close()}
		if w.active != nil {
			errs = append(errs, closeFile(w.active))
		}
		w.mu.Lock()
		close(w.durableCh)
		w.mu.Unlock()
		if err := errors.Join(errs...); err != nil {
			w.closeErr = fmt.Errorf("wal: close %s: %w", w.opts.Dir, err)
		}
	})
	return w.closeErr
}

// errClosed is returned by every operation after Close.
func (w *WAL) errClosed(op string) error {
	return fmt.Errorf("wal: %s: %w", op, domain.ErrClosed)
}
