package segmentlog

import "time"

// every runs fn every interval until the store stops; the eviction scan and
// the retention reaper are such loops.
func (s *Store) every(interval time.Duration, fn func()) {
	defer s.wg.Done()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
			fn()
		}
	}
}

// evictOnce runs one eviction scan: it closes logs idle for IdleEviction
// (when enabled) and closes poisoned logs so the next get reopens them with
// a full rescan.
func (s *Store) evictOnce() {
	now := s.opts.Now()
	for _, sl := range s.openSlots() {
		if l := sl.log.Load(); l != nil && (l.isPoisoned.Load() || s.idle(sl, now)) {
			s.tryEvict(sl, now)
		}
	}
}

func (s *Store) idle(sl *slot, now time.Time) bool {
	return s.opts.IdleEviction > 0 && now.Sub(time.Unix(0, sl.lastUse.Load())) >= s.opts.IdleEviction
}

// tryEvict closes sl's log under its produce lock (so the close lands
// between commits) and its topic guard, after checking again that it is
// still idle and owes retention nothing, or is poisoned. A busy produce lock
// means the log is in use: it is skipped.
func (s *Store) tryEvict(sl *slot, now time.Time) {
	if !sl.produce.TryLock() {
		return
	}
	defer sl.produce.Unlock()
	sl.topic.guard.Lock()
	defer sl.topic.guard.Unlock()
	l := sl.log.Load()
	if l == nil {
		return
	}
	poisoned := l.isPoisoned.Load()
	if !poisoned && (!s.idle(sl, now) || l.retentionOwes(now)) {
		return
	}
	sl.log.Store(nil)
	if err := l.close(true); err != nil {
		s.opts.Logger.Error("closing an evicted log", "dir", sl.dir, "error", err)
	}
	if !poisoned {
		s.stats.logsEvicted.Add(1)
	}
}
