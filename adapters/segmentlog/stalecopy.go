package segmentlog

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.StaleCopies = (*Store)(nil)

// LocalPartitions lists the partition directories under every topic
// directory that carries an incarnation marker, each named with that
// incarnation. Set-aside directories (p<NNNNN>.quarantine) are not
// partitions and are not listed.
func (s *Store) LocalPartitions() ([]domain.PartitionRef, error) {
	topics, err := s.TopicDirs()
	if err != nil {
		return nil, err
	}
	var out []domain.PartitionRef
	for _, t := range topics {
		if t.Quarantine || t.Marker == "" {
			continue
		}
		names, err := s.opts.FS.List(filepath.Join(s.topicsDir, t.Dir))
		if err != nil {
			return nil, fmt.Errorf("segmentlog: list %s: %w", t.Dir, err)
		}
		for _, n := range names {
			if p, ok := parsePartitionDirName(n); ok {
				out = append(out, domain.PartitionRef{Topic: t.Topic, TopicID: t.Marker, Partition: p})
			}
		}
	}
	return out, nil
}

// parsePartitionDirName reads the partition of a p<NNNNN> name.
func parsePartitionDirName(name string) (int32, bool) {
	digits, ok := strings.CutPrefix(name, "p")
	if !ok || len(digits) != partitionDirDigits {
		return 0, false
	}
	p, err := strconv.ParseInt(digits, 10, 32)
	return int32(p), err == nil && p >= 0
}

// DropStaleCopy takes this node's copy of ref off the partition path
// (internals.md §11.6, the stale-copy sweep of a former owner): with
// reclaim set it deletes the directory, but only when the copy's
// recovered boundary is at most guard; otherwise, or without reclaim, it
// sets the directory aside as p<NNNNN>.quarantine, never deleted here.
// It runs under the partition's produce lock and the topic's guard with
// the topic directory's marker naming ref's incarnation exactly, an open log closed first. It answers whether it
// deleted; a partition with no directory here drops nothing.
func (s *Store) DropStaleCopy(ref domain.PartitionRef, reclaim bool, guard int64) (deleted bool, err error) {
	if err := validateRef(ref); err != nil {
		return false, err
	}
	sl := s.slotFor(ref)
	sl.produce.Lock()
	defer sl.produce.Unlock()
	t := sl.topic
	t.guard.Lock()
	defer t.guard.Unlock()
	if s.closed.Load() {
		return false, errStoreClosed
	}
	// The directory must be the incarnation the sweep judged, exactly: a
	// drop never stamps or retires a topic directory.
	if err := s.loadMarkerLocked(t); err != nil {
		return false, err
	}
	if cur := *t.id.Load(); ref.TopicID == "" || cur != ref.TopicID {
		return false, domain.Refuse(domain.ErrConflict, fmt.Sprintf("%s is stamped %q, not %q", t.dir, cur, ref.TopicID))
	}
	if _, err := s.opts.FS.Stat(sl.dir); err != nil {
		return false, nil
	}
	boundary, err := s.closeForDropLocked(sl)
	if err != nil {
		return false, err
	}
	defer sl.broadcast()
	sl.floor.Store(0)
	if reclaim && boundary <= guard {
		if err := s.opts.FS.RemoveAll(sl.dir); err != nil {
			return false, fmt.Errorf("segmentlog: reclaim %s: %w", sl.dir, err)
		}
		return true, s.opts.FS.SyncDir(t.dir)
	}
	aside, err := s.setAsideLocked(sl)
	if err != nil {
		return false, err
	}
	s.opts.Logger.Error("a stale copy of a moved partition was set aside for an operator",
		"dir", aside, "boundary", boundary, "vouched", guard)
	return false, s.opts.FS.SyncDir(t.dir)
}

// closeForDropLocked closes ref's log, opening it first when it is closed,
// and answers its recovered boundary. Callers hold the produce lock and the
// topic guard.
func (s *Store) closeForDropLocked(sl *slot) (int64, error) {
	s.schedForget(sl)
	l := sl.log.Swap(nil)
	if l == nil {
		var err error
		if l, err = openLog(s.logConfig(sl)); err != nil {
			return 0, fmt.Errorf("segmentlog: recover %s before dropping it: %w", sl.dir, err)
		}
	}
	boundary := l.hwm.Load()
	if err := l.close(true); err != nil {
		return 0, fmt.Errorf("segmentlog: close %s before dropping it: %w", sl.dir, err)
	}
	return boundary, nil
}

// setAsideLocked renames sl's directory to the first free
// p<NNNNN>.quarantine[-N] name and answers it.
func (s *Store) setAsideLocked(sl *slot) (string, error) {
	aside := sl.dir + quarantineSuffix
	for i := 2; ; i++ {
		if _, err := s.opts.FS.Stat(aside); err != nil {
			break
		}
		aside = fmt.Sprintf("%s%s-%d", sl.dir, quarantineSuffix, i)
	}
	if err := s.opts.FS.Rename(sl.dir, aside); err != nil {
		return "", fmt.Errorf("segmentlog: set aside %s: %w", sl.dir, err)
	}
	return aside, nil
}

// StagedPartitions lists the partitions with a staging directory under
// .moves/ ("<topic>-<partition>"); names that are not one are skipped.
func (s *Store) StagedPartitions() ([]domain.PartitionRef, error) {
	names, err := s.opts.FS.List(filepath.Join(s.opts.DataDir, movesDirName))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("segmentlog: list staging: %w", err)
	}
	var out []domain.PartitionRef
	for _, n := range names {
		i := strings.LastIndexByte(n, '-')
		if i <= 0 {
			continue
		}
		p, err := strconv.ParseInt(n[i+1:], 10, 32)
		if err != nil || p < 0 || domain.ValidateTopicName(n[:i]) != nil {
			continue
		}
		out = append(out, domain.PartitionRef{Topic: n[:i], Partition: int32(p)})
	}
	return out, nil
}
