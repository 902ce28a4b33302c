package segmentlog

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad/narad/domain"
)

// flusher runs a log's background passes for records appended outside
// CommitDurable. An idle log holds neither a goroutine nor a timer, so a
// node with many open, quiet partitions pays nothing for them: a kick
// starts a pass on a goroutine of its own, and a pass that leaves work owed
// (buffered records, written-but-unsynced frames, or a failed write
// awaiting retry) arms a timer whose expiry kicks again.
type flusher struct {
	mu      sync.Mutex
	running bool        // a pass goroutine is live
	again   bool        // a kick came while it ran: run once more
	timer   *time.Timer // armed while a later pass is owed
	stopped bool
	passes  sync.WaitGroup
	armed   atomic.Bool // the timer is armed (for tests)
}

// stopFlusher disarms the timer and waits for a pass in progress; no pass
// starts after it.
func (l *partitionLog) stopFlusher() {
	f := &l.fl
	f.mu.Lock()
	f.stopped = true
	f.disarmLocked()
	f.mu.Unlock()
	f.passes.Wait()
}

// kick asks for a pass now: it starts one unless one is running, which
// then runs once more.
func (l *partitionLog) kick() {
	f := &l.fl
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.stopped:
		return
	case f.running:
		f.again = true
		return
	}
	f.disarmLocked()
	f.running = true
	f.passes.Add(1)
	go l.runFlusher()
}

// runFlusher runs passes until none is asked for, then arms the timer if
// work is owed and ends.
func (l *partitionLog) runFlusher() {
	f := &l.fl
	defer f.passes.Done()
	for {
		owed := l.backgroundPass()
		f.mu.Lock()
		if f.again && !f.stopped {
			f.again = false
			f.mu.Unlock()
			continue
		}
		f.running, f.again = false, false
		if owed && !f.stopped {
			f.timer = time.AfterFunc(flushTickInterval, l.kick)
			f.armed.Store(true)
		}
		f.mu.Unlock()
		return
	}
}

func (f *flusher) disarmLocked() {
	if f.timer != nil {
		f.timer.Stop()
		f.timer = nil
	}
	f.armed.Store(false)
}

// append buffers recs for the flusher and returns the first offset. They
// become visible only after the flusher's fsync and read-back.
func (l *partitionLog) append(recs []domain.Record) (int64, error) {
	l.mu.Lock()
	if err := l.writableLocked(); err != nil {
		l.mu.Unlock()
		return 0, err
	}
	wasEmpty := l.buf.count() == 0
	first := l.appendLocked(recs)
	drainNow := len(l.buf.data) >= flushBufferBytes || l.buf.count() >= flushBufferRecords
	l.mu.Unlock()
	if wasEmpty || drainNow {
		l.kick()
	}
	return first, nil
}

// sync drains and makes everything appended durable and visible now.
func (l *partitionLog) sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	if err := l.flushLocked(); err != nil {
		l.rollbackLocked()
		return fmt.Errorf("sync %s: %w", l.cfg.dir, err)
	}
	return nil
}

// backgroundPass drains the buffer when it is big or old enough and syncs
// when enough is unsynced or the last fsync is old enough. It reports
// whether another pass is owed.
func (l *partitionLog) backgroundPass() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shut || l.poisoned != nil {
		return false
	}
	now := time.Now()
	if l.drainDueLocked(now) {
		l.backgroundWriteLocked()
	}
	if l.syncDueLocked(now) {
		if err := l.syncAndAdvanceLocked(); err != nil {
			l.cfg.logger.Error("background flush failed; dropping everything above the high watermark",
				"dir", l.cfg.dir, "error", err)
			l.rollbackLocked()
		}
	}
	return l.buf.count() > 0 || len(l.written) > 0 || l.writeFailed
}

// backgroundWriteLocked writes the buffer; a failed write is cut back and
// retried from the same records on a later pass.
func (l *partitionLog) backgroundWriteLocked() {
	pos := l.writePos
	err := l.writeBufferLocked()
	l.writeFailed = err != nil
	if err == nil {
		return
	}
	l.cfg.logger.Warn("background write failed; will retry", "dir", l.cfg.dir, "error", err)
	if size, serr := l.file.Size(); serr != nil || size > pos {
		if terr := l.truncateLocked(pos); terr != nil {
			l.poisonLocked(terr)
		}
	}
}

func (l *partitionLog) drainDueLocked(now time.Time) bool {
	n := l.buf.count()
	return n > 0 && (l.writeFailed || n >= flushBufferRecords || len(l.buf.data) >= flushBufferBytes ||
		now.Sub(l.buf.oldestAt) >= flushAgeMin)
}

func (l *partitionLog) syncDueLocked(now time.Time) bool {
	return len(l.written) > 0 && (l.full || l.unsynced >= syncUnsyncedBytes || now.Sub(l.lastSync) >= syncInterval)
}
