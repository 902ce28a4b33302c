package segmentlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// movesDirName is where inbound moves stage their copies, beside topics/
// on the same filesystem so an install is a rename (internals.md §4.1).
const movesDirName = ".moves"

// quarantineSuffix marks a partition directory an install set aside
// (internals.md §4.1 p<NNNNN>.quarantine): never served, never deleted here.
const quarantineSuffix = ".quarantine"

// stagingDir names ref's staging directory.
func (s *Store) stagingDir(ref domain.PartitionRef) string {
	return filepath.Join(s.opts.DataDir, movesDirName, fmt.Sprintf("%s-%d", ref.Topic, ref.Partition))
}

// StagingReset empties ref's staging directory and creates it again.
func (s *Store) StagingReset(ref domain.PartitionRef) error {
	if err := validateRef(ref); err != nil {
		return err
	}
	dir := s.stagingDir(ref)
	if err := s.opts.FS.RemoveAll(dir); err != nil {
		return fmt.Errorf("segmentlog: reset staging of %s: %w", ref, err)
	}
	return ensureDir(s.opts.FS, dir)
}

// StagingRemove removes ref's staging directory, if any.
func (s *Store) StagingRemove(ref domain.PartitionRef) error {
	if err := validateRef(ref); err != nil {
		return err
	}
	if err := s.opts.FS.RemoveAll(s.stagingDir(ref)); err != nil {
		return fmt.Errorf("segmentlog: remove staging of %s: %w", ref, err)
	}
	return nil
}

// StagingSize is how many bytes of name ref's staging holds (0 when none).
func (s *Store) StagingSize(ref domain.PartitionRef, name string) (int64, error) {
	if err := checkStagedName(ref, name); err != nil {
		return 0, err
	}
	fi, err := s.opts.FS.Stat(filepath.Join(s.stagingDir(ref), name))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("segmentlog: staging of %s: %w", ref, err)
	}
	return fi.Size(), nil
}

// StagingWrite writes b at off of name in ref's staging, creating it.
func (s *Store) StagingWrite(ref domain.PartitionRef, name string, off int64, b []byte) error {
	if err := checkStagedName(ref, name); err != nil {
		return err
	}
	path := filepath.Join(s.stagingDir(ref), name)
	f, err := s.opts.FS.OpenRW(path)
	if errors.Is(err, fs.ErrNotExist) {
		f, err = s.opts.FS.Create(path)
	}
	if err != nil {
		return fmt.Errorf("segmentlog: stage %s of %s: %w", name, ref, err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		return fmt.Errorf("segmentlog: stage %s of %s: %w", name, ref, err)
	}
	return nil
}

// StagingTruncate cuts name in ref's staging to size (a side file the
// source rewrote shorter, copied again whole).
func (s *Store) StagingTruncate(ref domain.PartitionRef, name string, size int64) error {
	if err := checkStagedName(ref, name); err != nil {
		return err
	}
	f, err := s.opts.FS.OpenRW(filepath.Join(s.stagingDir(ref), name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("segmentlog: truncate staged %s of %s: %w", name, ref, err)
	}
	defer f.Close()
	return f.Truncate(size)
}

// StagingKeep removes every staged file of ref not in keep (segments the
// source's retention deleted meanwhile).
func (s *Store) StagingKeep(ref domain.PartitionRef, keep map[string]bool) error {
	dir := s.stagingDir(ref)
	names, err := s.opts.FS.List(dir)
	if err != nil {
		return fmt.Errorf("segmentlog: list staging of %s: %w", ref, err)
	}
	for _, n := range names {
		if !keep[n] {
			if err := s.opts.FS.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("segmentlog: drop staged %s of %s: %w", n, ref, err)
			}
		}
	}
	return nil
}

func checkStagedName(ref domain.PartitionRef, name string) error {
	if err := validateRef(ref); err != nil {
		return err
	}
	if !isTransferName(name) {
		return domain.Refuse(domain.ErrInvalidArgument, fmt.Sprintf("%q is not a partition file", name))
	}
	return nil
}

// Install makes ref's staged copy the partition's directory with high
// watermark m.PromotedHighWatermark (internals.md §11.3 step 6): every
// staged file, an hwm file holding the boundary and m as the move.marker
// are synced; then, under the partition's produce lock
// and the topic's guard, with the incarnation marker checked (or stamped)
// for ref.TopicID, an open log of the partition is closed, a directory
// already there is set aside as p<NNNNN>.quarantine (never deleted), and
// the staging directory is renamed into place. The next open recovers the
// log to hwm.
func (s *Store) Install(ref domain.PartitionRef, m ports.MoveMarker) error {
	if err := validateRef(ref); err != nil {
		return err
	}
	hwm := m.PromotedHighWatermark
	if ref.TopicID == "" || hwm < 0 {
		return domain.Refuse(domain.ErrInvalidArgument, fmt.Sprintf("install of %s at %d needs an incarnation and a boundary", ref, hwm))
	}
	staged := s.stagingDir(ref)
	if err := s.dropUnverifiedSide(staged); err != nil {
		return fmt.Errorf("segmentlog: install %s: %w", ref, err)
	}
	if err := s.writeMoveMarker(staged, m); err != nil {
		return fmt.Errorf("segmentlog: install %s: %w", ref, err)
	}
	if err := s.syncStaged(staged, hwm); err != nil {
		return fmt.Errorf("segmentlog: install %s: %w", ref, err)
	}
	sl := s.slotFor(ref)
	sl.produce.Lock()
	defer sl.produce.Unlock()
	t := sl.topic
	t.guard.Lock()
	defer t.guard.Unlock()
	if s.closed.Load() {
		return errStoreClosed
	}
	if err := s.checkIncarnationLocked(t, ref.TopicID); err != nil {
		return err
	}
	if l := sl.log.Swap(nil); l != nil {
		if err := l.close(true); err != nil {
			s.opts.Logger.Error("closing a partition's log before a move install", "dir", sl.dir, "error", err)
		}
	}
	defer sl.broadcast()
	if _, err := s.opts.FS.Stat(sl.dir); err == nil {
		aside, err := s.setAsideLocked(sl)
		if err != nil {
			return fmt.Errorf("segmentlog: install %s: %w", ref, err)
		}
		s.opts.Logger.Warn("a move install set aside the partition's old directory", "from", sl.dir, "to", aside)
	}
	if err := s.opts.FS.Rename(staged, sl.dir); err != nil {
		return fmt.Errorf("segmentlog: install %s: %w", ref, err)
	}
	for _, dir := range []string{t.dir, filepath.Dir(staged)} {
		if err := s.opts.FS.SyncDir(dir); err != nil {
			return fmt.Errorf("segmentlog: install %s: sync %s: %w", ref, dir, err)
		}
	}
	sl.floor.Store(0)
	// A freeze from a time this node was the partition's source concerns
	// the copy just replaced: it must not hold back the new owner's commits.
	sl.freeze.clear()
	s.schedInstalled(sl, ref)
	return nil
}

// syncStaged writes the hwm file into dir and fsyncs every file and dir.
func (s *Store) syncStaged(dir string, hwm int64) error {
	var b [hwmFileBytes]byte
	binary.BigEndian.PutUint64(b[:], uint64(hwm))
	if err := vfs.WriteFileAtomic(s.opts.FS, filepath.Join(dir, hwmFileName), b[:]); err != nil {
		return err
	}
	names, err := s.opts.FS.List(dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		f, err := s.opts.FS.OpenRW(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("sync staged %s: %w", n, err)
		}
	}
	return s.opts.FS.SyncDir(dir)
}

// Uninstall takes ref's installed copy back to staging (internals.md §11.5:
// a flip that did not commit), under the partition's produce lock and the
// topic's guard, only while the topic directory's marker names ref's
// incarnation exactly; an open log is closed first and staging left from
// before is replaced.
func (s *Store) Uninstall(ref domain.PartitionRef) error {
	if err := validateRef(ref); err != nil {
		return err
	}
	sl := s.slotFor(ref)
	sl.produce.Lock()
	defer sl.produce.Unlock()
	t := sl.topic
	t.guard.Lock()
	defer t.guard.Unlock()
	if s.closed.Load() {
		return errStoreClosed
	}
	if err := s.loadMarkerLocked(t); err != nil {
		return err
	}
	if cur := *t.id.Load(); ref.TopicID == "" || cur != ref.TopicID {
		return domain.Refuse(domain.ErrConflict, fmt.Sprintf("%s is stamped %q, not %q", t.dir, cur, ref.TopicID))
	}
	if l := sl.log.Swap(nil); l != nil {
		if err := l.close(true); err != nil {
			s.opts.Logger.Error("closing a partition's log before taking its copy back to staging", "dir", sl.dir, "error", err)
		}
	}
	s.schedForget(sl)
	defer sl.broadcast()
	staged := s.stagingDir(ref)
	if err := s.opts.FS.RemoveAll(staged); err != nil {
		return fmt.Errorf("segmentlog: uninstall %s: %w", ref, err)
	}
	if err := ensureDir(s.opts.FS, filepath.Dir(staged)); err != nil {
		return fmt.Errorf("segmentlog: uninstall %s: %w", ref, err)
	}
	if err := s.opts.FS.Rename(sl.dir, staged); err != nil {
		return fmt.Errorf("segmentlog: uninstall %s: %w", ref, err)
	}
	sl.floor.Store(0)
	for _, dir := range []string{t.dir, filepath.Dir(staged)} {
		if err := s.opts.FS.SyncDir(dir); err != nil {
			return fmt.Errorf("segmentlog: uninstall %s: sync %s: %w", ref, dir, err)
		}
	}
	return nil
}

// dropUnverifiedSide removes every staged side file that fails its check
// (internals.md §11.4): the partition goes on without it, its position
// read as none (a cursor replays from its attach point, consumers from the
// last good frontier), never from a damaged record.
func (s *Store) dropUnverifiedSide(dir string) error {
	if s.opts.VerifySide == nil {
		return nil
	}
	names, err := s.opts.FS.List(dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if !isSideFile(n) {
			continue
		}
		b, err := vfs.ReadFile(s.opts.FS, filepath.Join(dir, n))
		if err != nil {
			return err
		}
		if verr := s.opts.VerifySide(n, b); verr != nil {
			s.opts.Logger.Warn("a moved partition's side file does not verify: dropped", "file", n, "error", verr)
			if err := s.opts.FS.Remove(filepath.Join(dir, n)); err != nil {
				return err
			}
		}
	}
	return nil
}
