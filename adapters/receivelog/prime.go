package receivelog

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/narad/narad/adapters/partdir"
	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// ours reports whether ref's partition directory exists and belongs to
// ref's incarnation (its topic's marker names ref.TopicID; a legacy empty id
// accepts any directory).
func (s *Store) ours(ref domain.PartitionRef) (bool, error) {
	ok, err := partdir.Ours(s.fs, s.dataDir, ref)
	if err != nil {
		return false, fmt.Errorf("receivelog: %w", err)
	}
	return ok, nil
}

// ready makes p's descriptor usable for an Append: primed, reopened after
// an eviction, its directory entry durable, and cut back to the good end
// after a failed Append. A stranded p answers domain.ErrLogClosed.
func (s *Store) ready(ref domain.PartitionRef, p *part) error {
	switch {
	case p.stranded:
	case !p.primed:
		if err := s.prime(ref, p); err != nil {
			return err
		}
	case p.f == nil:
		f, err := s.openPinned(ref, p, false)
		if err != nil {
			return err
		}
		if f != nil {
			s.hold(p, f)
		}
	}
	if err := strandedErr(ref, p); err != nil {
		return err
	}
	if p.syncDir {
		if err := s.fs.SyncDir(p.dir); err != nil {
			return fmt.Errorf("receivelog: sync directory of %s: %w", ref, err)
		}
		p.syncDir = false
	}
	if p.dirty {
		if err := cut(p.f, p.end); err != nil {
			return fmt.Errorf("receivelog: cut %s back to %d bytes: %w", ref, p.end, err)
		}
		p.dirty = false
	}
	return nil
}

// prime opens (or creates) consumer.receives, finds its good end, cuts any
// torn tail and makes the file durable: its records may exist only in a
// crashed process's page cache, and the caller may act on what it loaded.
// ready then syncs the directory, whether or not the file was created here:
// an earlier process may have created it and died before its directory
// sync (one directory sync per partition per start).
func (s *Store) prime(ref domain.PartitionRef, p *part) error {
	f, err := s.openPinned(ref, p, true)
	if err != nil || f == nil {
		return err
	}
	p.syncDir = true
	if err := s.fs.Remove(filepath.Join(p.dir, tmpFileName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		_ = f.Close()
		return fmt.Errorf("receivelog: prime %s: remove leftover %s: %w", ref, tmpFileName, err)
	}
	b, err := readAll(f)
	if err == nil {
		_, good := decodeFrames(b)
		p.end, p.size = good, good
		err = cut(f, good)
	}
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("receivelog: prime %s: %w", ref, err)
	}
	p.primed, p.dirty = true, false
	s.hold(p, f)
	return nil
}

// cut truncates f to end when it is longer and makes it durable.
func cut(f vfs.File, end int64) error {
	size, err := f.Size()
	if err == nil && size > end {
		err = f.Truncate(end)
	}
	if err == nil {
		err = f.Sync()
	}
	return err
}

// openPinned opens consumer.receives in p's directory, creating the file
// (when create is set) but never the directory, and keeps it only if the
// directory still belongs to ref's incarnation after the open. A nil file
// with a nil error means p is now stranded.
func (s *Store) openPinned(ref domain.PartitionRef, p *part, create bool) (vfs.File, error) {
	if ok, err := s.ours(ref); err != nil || !ok {
		p.stranded = !ok && err == nil
		return nil, err
	}
	path := filepath.Join(p.dir, receivesFileName)
	f, err := s.fs.OpenRW(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		f, err = s.fs.Create(path)
	}
	return s.pinned(ref, p, f, err)
}

// createTmp creates a fresh consumer.receives.tmp for a Compact, pinned
// like openPinned. A stranded p answers domain.ErrLogClosed.
func (s *Store) createTmp(ref domain.PartitionRef, p *part) (vfs.File, error) {
	if p.stranded {
		return nil, strandedErr(ref, p)
	}
	if ok, err := s.ours(ref); err != nil || !ok {
		p.stranded = !ok && err == nil
		return nil, errors.Join(err, strandedErr(ref, p))
	}
	path := filepath.Join(p.dir, tmpFileName)
	if err := s.fs.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("receivelog: remove leftover %s: %w", path, err)
	}
	f, err := s.fs.Create(path)
	f, err = s.pinned(ref, p, f, err)
	if err == nil && f == nil {
		err = strandedErr(ref, p)
	}
	return f, err
}

// pinned finishes an open of a file in p's directory: a missing directory
// strands p, and so does a marker that no longer names ref's incarnation
// once the file is open (a file created there then is left, empty).
func (s *Store) pinned(ref domain.PartitionRef, p *part, f vfs.File, err error) (vfs.File, error) {
	if errors.Is(err, fs.ErrNotExist) {
		p.stranded = true
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("receivelog: open in %s: %w", p.dir, err)
	}
	if ok, err := s.ours(ref); err != nil || !ok {
		_ = f.Close()
		p.stranded = !ok && err == nil
		return nil, err
	}
	return f, nil
}

// readAll reads the whole of f.
func readAll(f vfs.File) ([]byte, error) {
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	b := make([]byte, size)
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:n], nil
}

// hold records f as p's descriptor and, over the cap, closes the least
// recently used descriptor of another partition that is not busy.
func (s *Store) hold(p *part, f vfs.File) {
	p.f = f
	s.mu.Lock()
	s.held++
	var others []*part
	if s.held > s.maxHeld {
		for _, q := range s.parts {
			if q != p {
				others = append(others, q)
			}
		}
		slices.SortFunc(others, func(a, b *part) int { return cmp.Compare(a.lastUse, b.lastUse) })
	}
	s.mu.Unlock()
	for _, q := range others {
		if !q.mu.TryLock() {
			continue
		}
		evicted := q.f != nil
		s.release(q)
		q.mu.Unlock()
		if evicted {
			return
		}
	}
}

// release closes p's descriptor, if held. Everything written through it was
// synced or is cut on the next Append (dirty).
func (s *Store) release(p *part) {
	if p.f == nil {
		return
	}
	_ = p.f.Close()
	p.f = nil
	s.mu.Lock()
	s.held--
	s.mu.Unlock()
}
