package segmentlog

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.TopicDirs = (*Store)(nil)

// TopicDirs lists the directories under topics/ with their markers. An
// entry that is not a directory is skipped.
func (s *Store) TopicDirs() ([]ports.TopicDir, error) {
	names, err := s.opts.FS.List(s.topicsDir)
	if err != nil {
		return nil, fmt.Errorf("segmentlog: list %s: %w", s.topicsDir, err)
	}
	out := make([]ports.TopicDir, 0, len(names))
	for _, name := range names {
		path := filepath.Join(s.topicsDir, name)
		if fi, err := s.opts.FS.Stat(path); err != nil || !fi.IsDir() {
			continue
		}
		marker, err := readMarker(s.opts.FS, path)
		if err != nil {
			return nil, err
		}
		d := ports.TopicDir{Dir: name, Topic: name, Marker: marker, ID: marker}
		if topic, id, ok := parseQuarantine(name); ok {
			d.Topic, d.ID, d.Quarantine = topic, id, true
			d.Bytes = s.treeBytes(path, quarantineWalkDepthMax)
		}
		out = append(out, d)
	}
	return out, nil
}

// quarantineWalkDepthMax bounds the walk that sizes a quarantined
// directory: topic, partition, files.
const quarantineWalkDepthMax = 3

// treeBytes sums the sizes of the files under path, depth levels deep at
// most; what cannot be read counts nothing (an inventory, not a check).
func (s *Store) treeBytes(path string, depth int) int64 {
	fi, err := s.opts.FS.Stat(path)
	if err != nil {
		return 0
	}
	if !fi.IsDir() {
		return fi.Size()
	}
	if depth == 0 {
		return 0
	}
	names, err := s.opts.FS.List(path)
	if err != nil {
		return 0
	}
	var n int64
	for _, name := range names {
		n += s.treeBytes(filepath.Join(path, name), depth-1)
	}
	return n
}

// parseQuarantine splits "<topic>.stale-<id>" and "<topic>.stale-<id>-<n>".
func parseQuarantine(dir string) (string, domain.TopicID, bool) {
	i := strings.LastIndex(dir, staleDirInfix)
	if i <= 0 {
		return "", "", false
	}
	topic, rest := dir[:i], dir[i+len(staleDirInfix):]
	if j := strings.IndexByte(rest, '-'); j >= 0 {
		rest = rest[:j]
	}
	id := domain.TopicID(rest)
	if rest == "unknown" {
		id = ""
	} else if !id.Valid() || id == "" {
		return "", "", false
	}
	return topic, id, validTopicName(topic)
}

// ReclaimTopicDir deletes d under the guard of the topic named like the
// directory, so no open races it: a quarantine at once, a topic's directory
// only while its marker is still d.Marker and none of its logs is open.
func (s *Store) ReclaimTopicDir(d ports.TopicDir) error {
	if !validTopicName(d.Dir) {
		return fmt.Errorf("segmentlog: reclaim %q: %w", d.Dir, domain.ErrInvalidRecord)
	}
	t := s.topic(d.Dir)
	t.guard.Lock()
	defer t.guard.Unlock()
	if s.closed.Load() {
		return errStoreClosed
	}
	marker, err := readMarker(s.opts.FS, t.dir)
	if err != nil {
		return err
	}
	if marker != d.Marker || s.anyOpenLocked(t) {
		return fmt.Errorf("segmentlog: reclaim %s: the directory changed since it was listed: %w", d.Dir, domain.ErrConflict)
	}
	if err := s.opts.FS.RemoveAll(t.dir); err != nil {
		return fmt.Errorf("segmentlog: reclaim %s: %w", t.dir, err)
	}
	if err := s.opts.FS.SyncDir(s.topicsDir); err != nil {
		return fmt.Errorf("segmentlog: reclaim %s: sync %s: %w", t.dir, s.topicsDir, err)
	}
	t.known = false // the next open reads the (absent) marker again
	for _, sl := range s.topicSlots(t) {
		sl.broadcast() // drops cached stats of the directories just removed
	}
	return nil
}

func (s *Store) anyOpenLocked(t *topicState) bool {
	for _, sl := range s.topicSlots(t) {
		if sl.log.Load() != nil {
			return true
		}
	}
	return false
}
