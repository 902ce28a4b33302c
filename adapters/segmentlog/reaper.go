package segmentlog

import (
	"fmt"
	"time"
)

// reapOnce sweeps every open log with a retention bound once; the store
// runs it about once a minute (the process-wide retention reaper).
func (s *Store) reapOnce() {
	now := s.opts.Now()
	for _, sl := range s.openSlots() {
		if l := sl.log.Load(); l != nil && l.retention.Load() > 0 {
			s.sweepSafely(l, now)
		}
	}
}

// sweepSafely runs one log's sweep; a panic is logged, counted and skipped
// for that log so the reaper keeps running.
func (s *Store) sweepSafely(l *partitionLog, now time.Time) {
	defer func() {
		if r := recover(); r != nil {
			s.stats.reaperPanics.Add(1)
			s.opts.Logger.Error("retention sweep panicked; skipped", "dir", l.cfg.dir, "panic", fmt.Sprint(r))
		}
	}()
	if h := s.opts.hooks; h != nil && h.sweep != nil {
		h.sweep(l.cfg.dir)
	}
	start := time.Now()
	l.sweep(now)
	l.cfg.obs.RetentionRun(l.cfg.key.topic, l.cfg.key.partition, time.Since(start))
}

// sweep deletes the sealed segments whose last write is older than the
// retention, first sealing an idle, fully committed active segment whose
// every record has expired. Segments are detached under the write lock and
// unlinked after it is released.
func (l *partitionLog) sweep(now time.Time) {
	expired := l.detachExpired(now)
	if len(expired) == 0 {
		return
	}
	stats := l.cfg.stats
	var bytes, messages int64
	for _, e := range expired {
		if err := l.cfg.fsys.Remove(e.seg.path); err != nil {
			stats.retentionUnlinkErrors.Add(1)
			l.cfg.obs.StorageError(ErrorKindRetentionUnlink)
			l.cfg.logger.Error("retention could not unlink a segment", "path", e.seg.path, "error", err)
			continue
		}
		stats.segmentsDeleted.Add(1)
		stats.bytesDeleted.Add(e.seg.sizeBytes)
		stats.messagesDeleted.Add(e.messages)
		bytes += e.seg.sizeBytes
		messages += e.messages
	}
	if bytes > 0 || messages > 0 {
		l.cfg.obs.RetentionDeleted(l.cfg.key.topic, l.cfg.key.partition, bytes, messages)
	}
	if err := l.cfg.fsys.SyncDir(l.cfg.dir); err != nil {
		l.cfg.logger.Warn("retention could not sync the partition directory", "dir", l.cfg.dir, "error", err)
	}
}

type expiredSegment struct {
	seg      *segment
	messages int64
}

func (l *partitionLog) detachExpired(now time.Time) []expiredSegment {
	l.mu.Lock()
	defer l.mu.Unlock()
	age := time.Duration(l.retention.Load())
	if l.shut || age <= 0 {
		return nil
	}
	cutoff := now.Add(-age)
	if l.idleRotationDueLocked(cutoff) {
		if err := l.rollLocked(); err != nil {
			l.cfg.logger.Warn("retention could not seal an idle segment", "dir", l.cfg.dir, "error", err)
		}
	}
	n := l.expiredPrefixLocked(cutoff)
	if n == 0 {
		return nil
	}
	out := make([]expiredSegment, n)
	l.segMu.Lock()
	for i, seg := range l.segs[:n] {
		out[i] = expiredSegment{seg: seg, messages: l.segs[i+1].base - seg.base}
		l.hot.drop(seg.base)
	}
	l.segs = append([]*segment(nil), l.segs[n:]...)
	l.oldest.Store(l.segs[0].base)
	l.cache.clear()
	l.segMu.Unlock()
	return out
}

// expiredPrefixLocked counts the leading sealed segments last written at or
// before cutoff. The active segment is never counted.
func (l *partitionLog) expiredPrefixLocked(cutoff time.Time) int {
	n := 0
	for n < len(l.segs)-1 && !l.segs[n].lastWrite.After(cutoff) {
		n++
	}
	return n
}

// idleRotationDueLocked: the active segment holds records, all of them
// visible, and was last written at or before cutoff.
func (l *partitionLog) idleRotationDueLocked(cutoff time.Time) bool {
	return l.hwmPos > 0 && len(l.hidden) == 0 && len(l.written) == 0 && l.buf.count() == 0 &&
		!l.active.lastWrite.IsZero() && !l.active.lastWrite.After(cutoff)
}

// retentionOwes reports whether a sweep at now would delete or seal
// something; idle eviction leaves such a log open for the reaper.
func (l *partitionLog) retentionOwes(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	age := time.Duration(l.retention.Load())
	if age <= 0 {
		return false
	}
	cutoff := now.Add(-age)
	return l.idleRotationDueLocked(cutoff) || l.expiredPrefixLocked(cutoff) > 0
}
