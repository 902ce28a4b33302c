package segmentlog

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad/narad/domain"
)

// flusher is a log's background writer for records appended outside
// CommitDurable. Its timer is armed only while a pass is owed (buffered
// records, written-but-unsynced frames, or a failed write awaiting retry):
// an idle log holds no timer.
type flusher struct {
	kickc    chan struct{}
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	armed    atomic.Bool // the timer is armed (for tests)
}

func (l *partitionLog) startFlusher() {
	l.fl.kickc = make(chan struct{}, 1)
	l.fl.stop = make(chan struct{})
	l.fl.done = make(chan struct{})
	go l.runFlusher()
}

func (l *partitionLog) stopFlusher() {
	l.fl.stopOnce.Do(func() { close(l.fl.stop) })
	<-l.fl.done
}

func (l *partitionLog) kick() {
	select {
	case l.fl.kickc <- struct{}{}:
	default:
	}
}

func (l *partitionLog) runFlusher() {
	defer close(l.fl.done)
	var timer *time.Timer
	var tick <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-l.fl.stop:
			return
		case <-l.fl.kickc:
		case <-tick:
		}
		owed := l.backgroundPass()
		switch {
		case owed && timer == nil:
			timer = time.NewTimer(flushTickInterval)
			tick = timer.C
		case owed:
			timer.Reset(flushTickInterval)
		case timer != nil:
			timer.Stop()
			timer, tick = nil, nil
		}
		l.fl.armed.Store(timer != nil)
	}
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
