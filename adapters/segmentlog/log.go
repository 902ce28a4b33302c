package segmentlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// errLogClosed is what every operation on a closed log answers.
var errLogClosed = fmt.Errorf("segmentlog: %w", domain.ErrLogClosed)

// logConfig is what a partition log gets from its store.
type logConfig struct {
	fsys   vfs.FS
	key    partKey // topic and partition, for the observer
	dir    string  // <data>/topics/<topic>/p<NNNNN>
	codecs *codecSet
	segMax int64
	now    func() time.Time
	logger *slog.Logger
	stats  *counters
	notify func()        // wakes the partition's waiters
	floor  *atomic.Int64 // commit-time floor; the store keeps it across reopens
	obs    Observer
	hooks  *testHooks
}

// partitionLog is one open partition log. Writers (commit, append, the
// flusher, a sweep, close) serialise on mu; readers never take it: they read
// only below the high watermark, whose frames are verified and immutable.
type partitionLog struct {
	cfg       logConfig
	retention atomic.Int64 // nanoseconds; 0 keeps records forever

	mu          sync.Mutex
	active      *segment
	file        vfs.File   // the active segment, read-write
	hwmPos      int64      // end of the last visible frame in the active segment
	writePos    int64      // end of everything written to the active segment
	hidden      []frameLoc // recovered frames above the HWM (the hidden tail)
	written     []frameLoc // frames written since the last advance, unverified
	next        int64      // next offset to hand out
	buf         recordBuffer
	frameBuf    []byte     // the frames of one drain, reused
	encoded     []frameLoc // scratch for one drain, reused
	cuts        []int      // scratch for one drain, reused
	full        bool       // the active segment passed segMax: roll before the next write
	unsynced    int64      // bytes written since the last fsync
	lastSync    time.Time  // monotonic
	poisoned    error      // a failed fsync; cleared only by reopening
	released    bool       // the hwm file is empty (or absent) for this open
	fileHWM     int64      // what the hwm file held at open, when !released
	writeFailed bool       // a background write failed; a retry is owed
	shut        bool       // closed, as seen under mu

	isPoisoned     atomic.Bool // mirrors poisoned != nil for lock-free checks
	hwm            atomic.Int64
	oldest         atomic.Int64
	closed         atomic.Bool
	readSinceWrite atomic.Bool

	segMu sync.RWMutex // guards segs; held shared by readers, exclusively by roll, delete and close
	segs  []*segment   // ascending; the last is active
	hot   *hotSet
	cache *frameCache

	fl flusher
}

// recordBuffer holds appended records not yet written, each as
// [u32 len][envelope].
type recordBuffer struct {
	data     []byte
	ends     []int
	oldestAt time.Time // monotonic arrival of the first buffered record
}

func (b *recordBuffer) count() int { return len(b.ends) }

func (b *recordBuffer) add(key []byte, ms int64, payload []byte, now time.Time) {
	if len(b.ends) == 0 {
		b.oldestAt = now
	}
	b.data = binary.BigEndian.AppendUint32(b.data, uint32(envelopeBytes(len(key), len(payload))))
	b.data = appendEnvelope(b.data, key, ms, payload)
	b.ends = append(b.ends, len(b.data))
}

func (b *recordBuffer) reset() {
	b.data, b.ends = b.data[:0], b.ends[:0]
}

// checkRecords refuses a batch no frame can hold, before anything is
// appended.
func checkRecords(recs []domain.Record) error {
	if len(recs) == 0 {
		return fmt.Errorf("empty batch: %w", domain.ErrInvalidRecord)
	}
	for i, r := range recs {
		if r.CommittedAtMs < 0 {
			return fmt.Errorf("record %d: negative committed_at_ms: %w", i, domain.ErrInvalidRecord)
		}
		if n := recordLenBytes + envelopeBytes(len(r.Key), len(r.Payload)); n > frameInnerSplitBytes {
			return fmt.Errorf("record %d of %d bytes: %w", i, n, domain.ErrRecordTooLarge)
		}
	}
	return nil
}

// writableLocked reports why the log takes no append.
func (l *partitionLog) writableLocked() error {
	if l.shut {
		return errLogClosed
	}
	return l.poisoned
}

// appendLocked buffers recs at the next offsets and returns the first. A
// zero commit time is stamped now; every time is raised to the partition's
// floor so commit times never decrease.
func (l *partitionLog) appendLocked(recs []domain.Record) int64 {
	first := l.next
	now := time.Now()
	floor := l.cfg.floor.Load()
	for _, r := range recs {
		ms := r.CommittedAtMs
		if ms == 0 {
			ms = l.cfg.now().UnixMilli()
		}
		floor = max(floor, ms)
		l.buf.add(r.Key, floor, r.Payload, now)
	}
	l.cfg.floor.Store(floor)
	l.next += int64(len(recs))
	return first
}

func (l *partitionLog) poisonLocked(cause error) {
	if l.poisoned != nil {
		return
	}
	l.poisoned = fmt.Errorf("segmentlog: %s: %w: %w", l.cfg.dir, domain.ErrLogPoisoned, cause)
	l.isPoisoned.Store(true)
	l.cfg.stats.fsyncPoisoned.Add(1)
	l.cfg.obs.StorageError(ErrorKindFsyncPoisoned)
	l.cfg.logger.Error("partition log poisoned by a failed fsync; appends fail until it is reopened",
		"dir", l.cfg.dir, "error", cause)
}

func (l *partitionLog) bounds() ports.LogBounds {
	hwm := l.hwm.Load()
	return ports.LogBounds{Oldest: min(l.oldest.Load(), hwm), HighWatermark: hwm}
}

// close stops the flusher and closes the log. With flush it first drains,
// syncs and verifies what is buffered and writes the exact high watermark to
// the hwm file; without, it abandons everything (the directory is going).
func (l *partitionLog) close(flush bool) error {
	l.stopFlusher()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shut {
		return nil
	}
	l.shut = true
	var errs []error
	if flush && l.poisoned == nil {
		if err := l.flushLocked(); err != nil {
			errs = append(errs, err)
			l.rollbackLocked()
		}
	}
	if flush {
		if err := l.writeHWMLocked(); err != nil {
			errs = append(errs, err)
		}
	}
	l.segMu.Lock()
	l.closed.Store(true)
	if err := l.file.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close %s: %w", l.active.path, err))
	}
	l.hot.closeAll()
	l.cache.clear()
	l.segMu.Unlock()
	l.cfg.notify()
	l.cfg.obs.Closed(l.cfg.key.topic, l.cfg.key.partition)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close %s: %w", l.cfg.dir, err)
	}
	return nil
}
