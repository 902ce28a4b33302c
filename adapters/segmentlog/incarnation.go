package segmentlog

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// ErrStaleIncarnation reports a ref naming an incarnation of its topic that
// this store has quarantined (a delete + recreate replaced it). The error
// also matches domain.ErrLogClosed: for a reader it is the transient "log
// closed", never a gap.
var ErrStaleIncarnation = errors.New("segmentlog: retired topic incarnation")

func staleError(topic string, id domain.TopicID) error {
	return fmt.Errorf("segmentlog: topic %s incarnation %s: %w: %w", topic, id, ErrStaleIncarnation, domain.ErrLogClosed)
}

// validateRef refuses names no directory may carry.
func validateRef(ref domain.PartitionRef) error {
	if err := domain.ValidateTopicName(ref.Topic); err != nil {
		return fmt.Errorf("segmentlog: %w: %w", domain.ErrInvalidRecord, err)
	}
	switch {
	case ref.Partition < 0:
		return fmt.Errorf("segmentlog: partition %d: %w", ref.Partition, domain.ErrInvalidRecord)
	case !ref.TopicID.Valid():
		return fmt.Errorf("segmentlog: topic id %q: %w", ref.TopicID, domain.ErrInvalidRecord)
	}
	return nil
}

func validTopicName(name string) bool { return domain.ValidateTopicName(name) == nil }

// resolve returns the open log of sl for incarnation id, opening it lazily
// after the incarnation check. stamp marks a real get (idle eviction skips
// recently used logs); peeks pass false.
func (s *Store) resolve(sl *slot, id domain.TopicID, stamp bool) (*partitionLog, error) {
	t := sl.topic
	if l := sl.log.Load(); l != nil && t.serves(id) {
		s.stampUse(sl, stamp)
		return l, nil
	}
	t.guard.Lock()
	defer t.guard.Unlock()
	if s.closed.Load() {
		return nil, errStoreClosed
	}
	if err := s.checkIncarnationLocked(t, id); err != nil {
		return nil, err
	}
	l := sl.log.Load()
	if l == nil {
		var err error
		if l, err = openLog(s.logConfig(sl)); err != nil {
			return nil, fmt.Errorf("segmentlog: open %s/%d: %w", t.name, sl.key.partition, err)
		}
		l.retention.Store(t.retention.Load())
		sl.log.Store(l)
	}
	s.stampUse(sl, stamp)
	return l, nil
}

func (s *Store) stampUse(sl *slot, stamp bool) {
	if stamp {
		sl.lastUse.Store(s.opts.Now().UnixNano())
	}
}

func (s *Store) logConfig(sl *slot) logConfig {
	return logConfig{
		fsys: s.opts.FS, key: sl.key, dir: sl.dir, codecs: s.codecs, segMax: s.opts.SegmentMaxBytes,
		now: s.opts.Now, logger: s.opts.Logger, stats: &s.stats,
		notify: sl.broadcast, floor: &sl.floor, obs: s.opts.Observer, hooks: s.opts.hooks,
	}
}

// loadMarkerLocked reads the topic's marker once.
func (s *Store) loadMarkerLocked(t *topicState) error {
	if t.known {
		return nil
	}
	id, err := readMarker(s.opts.FS, t.dir)
	if err != nil {
		return err
	}
	t.id.Store(&id)
	t.known = true
	return nil
}

// readMarker reads the incarnation marker in dir: empty when there is none.
func readMarker(fsys vfs.FS, dir string) (domain.TopicID, error) {
	b, err := vfs.ReadFile(fsys, filepath.Join(dir, markerFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("segmentlog: read incarnation marker of %s: %w", dir, err)
	}
	return domain.TopicID(strings.TrimSpace(string(b))), nil
}

// checkIncarnationLocked compares the directory's marker with id: match →
// serve; no marker → adopt id; another id → quarantine the directory and
// start a fresh one. An empty id keeps name-based behaviour.
func (s *Store) checkIncarnationLocked(t *topicState, id domain.TopicID) error {
	if err := s.loadMarkerLocked(t); err != nil {
		return err
	}
	cur := *t.id.Load()
	switch {
	case id == "" || id == cur:
		return nil
	case t.retired[id]:
		return staleError(t.name, id)
	}
	if _, err := s.opts.FS.Stat(t.dir + staleDirInfix + string(id)); err == nil {
		t.retired[id] = true
		return staleError(t.name, id)
	}
	if cur != "" {
		if err := s.retireLocked(t, cur, id); err != nil {
			return err
		}
	}
	return s.adoptLocked(t, id)
}

// adoptLocked stamps id on the topic directory.
func (s *Store) adoptLocked(t *topicState, id domain.TopicID) error {
	if err := ensureDir(s.opts.FS, t.dir); err != nil {
		return fmt.Errorf("segmentlog: topic %s: %w", t.name, err)
	}
	if err := vfs.WriteFileAtomic(s.opts.FS, filepath.Join(t.dir, markerFileName), []byte(id)); err != nil {
		return fmt.Errorf("segmentlog: stamp incarnation %s on %s: %w", id, t.name, err)
	}
	t.id.Store(&id)
	return nil
}

// retireLocked closes the topic's open logs and renames its directory to
// topics/<name>.stale-<old>, where nothing serves it; reclaiming it is the
// leader-confirmed sweeps' job.
func (s *Store) retireLocked(t *topicState, old, live domain.TopicID) error {
	for _, sl := range s.topicSlots(t) {
		if l := sl.log.Swap(nil); l != nil {
			if err := l.close(true); err != nil {
				s.opts.Logger.Error("closing a stale incarnation's log", "dir", sl.dir, "error", err)
			}
		}
		sl.floor.Store(0)
		sl.broadcast()
	}
	if _, err := s.opts.FS.Stat(t.dir); err == nil {
		dst := s.staleDir(t, old)
		if err := s.opts.FS.Rename(t.dir, dst); err != nil {
			return fmt.Errorf("segmentlog: quarantine %s: %w", t.dir, err)
		}
		if err := s.opts.FS.SyncDir(s.topicsDir); err != nil {
			return fmt.Errorf("segmentlog: quarantine %s: sync %s: %w", t.dir, s.topicsDir, err)
		}
		s.opts.Logger.Info("quarantined the directory of a replaced topic incarnation (the topic was deleted and created again before this node purged it)",
			"topic", t.name, "stale_id", string(old), "live_id", string(live), "to", dst)
	}
	t.retired[old] = true
	empty := domain.TopicID("")
	t.id.Store(&empty)
	return nil
}

// staleDir names the quarantine of incarnation old, never an existing one.
func (s *Store) staleDir(t *topicState, old domain.TopicID) string {
	name := string(old)
	if !old.Valid() || old == "" {
		name = "unknown"
	}
	dst := t.dir + staleDirInfix + name
	for i := 2; ; i++ {
		if _, err := s.opts.FS.Stat(dst); err != nil {
			return dst
		}
		dst = fmt.Sprintf("%s%s%s-%d", t.dir, staleDirInfix, name, i)
	}
}

func (s *Store) topicSlots(t *topicState) []*slot {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*slot, 0, len(t.slots))
	for _, sl := range t.slots {
		out = append(out, sl)
	}
	return out
}
