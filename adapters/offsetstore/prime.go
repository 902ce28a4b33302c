package offsetstore

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
		return false, fmt.Errorf("offsetstore: %w", err)
	}
	return ok, nil
}

// ready primes p on its first use, or reopens its evicted descriptor. A
// directory that is missing or replaced strands p.
func (s *Store) ready(ref domain.PartitionRef, p *part) error {
	switch {
	case p.stranded:
		return nil
	case !p.primed:
		return s.prime(ref, p)
	case p.f == nil:
		f, _, err := s.openPinned(ref, p, aheadFileName)
		if err != nil || f == nil {
			return err
		}
		s.hold(p, f)
	}
	return nil
}

// prime opens (or creates) consumer.ahead, extends it to two slots, anchors
// on its newest valid slot and makes the file and its directory entry
// durable before any window write: that slot may exist only in a crashed
// process's page cache, and the first window write overwrites the other one
// (internals.md §5.8).
func (s *Store) prime(ref domain.PartitionRef, p *part) error {
	f, _, err := s.openPinned(ref, p, aheadFileName)
	if err != nil || f == nil {
		return err
	}
	image, err := extendAndRead(f)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		// Always: an earlier process may have created the file (or
		// consumer.offset) and died before it synced the entry.
		err = s.fs.SyncDir(p.dir)
	}
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("offsetstore: prime %s: %w", ref, err)
	}
	best, r := newest(image)
	p.anchor, p.anchorSeq = max(best, 0), r.seq
	p.primed, p.window = true, false
	s.hold(p, f)
	return nil
}

// openPinned opens name in p's directory, creating the file but never the
// directory, and keeps it only if the directory still belongs to ref's
// incarnation after the open. A nil file with a nil error means p is now
// stranded.
func (s *Store) openPinned(ref domain.PartitionRef, p *part, name string) (vfs.File, bool, error) {
	if ok, err := s.ours(ref); err != nil || !ok {
		p.stranded = !ok && err == nil
		return nil, false, err
	}
	path := filepath.Join(p.dir, name)
	f, err := s.fs.OpenRW(path)
	created := false
	if errors.Is(err, fs.ErrNotExist) && (name == offsetFileName || !p.primed) {
		f, err = s.fs.Create(path)
		created = err == nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		p.stranded = true
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("offsetstore: open %s: %w", path, err)
	}
	if ok, err := s.ours(ref); err != nil || !ok {
		_ = f.Close() // a file created here holds zeros: it reads as nothing
		p.stranded = !ok && err == nil
		return nil, false, err
	}
	return f, created, nil
}

// extendAndRead grows a short consumer.ahead to two slots with zeros and
// returns its two slots.
func extendAndRead(f vfs.File) ([]byte, error) {
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	if size < aheadFileBytes {
		if err := f.Truncate(aheadFileBytes); err != nil {
			return nil, err
		}
	}
	image := make([]byte, aheadFileBytes)
	if _, err := f.ReadAt(image, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return image, nil
}

// hold records f as p's descriptor and closes the least recently written
// durable descriptor of another partition when over the cap. When none is
// durable (or each is busy) the cap is exceeded until one becomes durable.
func (s *Store) hold(p *part, f vfs.File) {
	p.f = f
	s.mu.Lock()
	s.held++
	var candidates []*part
	if s.held > s.maxHeld {
		for _, q := range s.parts {
			if q != p {
				candidates = append(candidates, q)
			}
		}
		slices.SortFunc(candidates, func(a, b *part) int { return cmp.Compare(a.lastWrite, b.lastWrite) })
	}
	s.mu.Unlock()
	for _, q := range candidates {
		if !q.mu.TryLock() {
			continue
		}
		evicted := q.f != nil && !q.window
		if evicted {
			s.release(q)
		}
		q.mu.Unlock()
		if evicted {
			return
		}
	}
}
