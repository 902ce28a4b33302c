package cursorfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/narad/narad/adapters/partdir"
	"github.com/narad/narad/adapters/segmentlog"
	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.FanoutCursors = (*Store)(nil)

// Options configure a Store. Both are required.
type Options struct {
	FS vfs.FS
	// DataDir is the node's data directory, as adapters/segmentlog was
	// given it.
	DataDir string
}

// Store is the file-backed ports.FanoutCursors. It holds no descriptor
// between calls and no state: safe for concurrent use on different files.
type Store struct {
	fs      vfs.FS
	dataDir string
}

// New returns a Store over opts. It touches nothing on disk.
func New(opts Options) (*Store, error) {
	if opts.FS == nil || opts.DataDir == "" {
		return nil, errors.New("cursorfile: FS and DataDir are required")
	}
	return &Store{fs: opts.FS, dataDir: filepath.Clean(opts.DataDir)}, nil
}

func (s *Store) dir(ref domain.PartitionRef) string {
	return segmentlog.PartitionDir(s.dataDir, ref.Topic, ref.Partition)
}

func (s *Store) path(ref domain.PartitionRef, child string) string {
	return filepath.Join(s.dir(ref), filePrefix+child+fileSuffix)
}

// Load reads child's cursor on parent, re-reading a record that fails its
// CRC or does not parse before declaring it corrupt.
func (s *Store) Load(parent domain.PartitionRef, child string) (ports.FanoutCursor, bool, error) {
	if err := validNames(parent, child); err != nil {
		return ports.FanoutCursor{}, false, err
	}
	if ours, err := s.ours(parent); err != nil || !ours {
		return ports.FanoutCursor{}, false, err
	}
	name := s.path(parent, child)
	for attempt := 0; ; attempt++ {
		b, err := readCapped(s.fs, name)
		if errors.Is(err, fs.ErrNotExist) {
			return ports.FanoutCursor{}, false, nil
		}
		if err != nil {
			return ports.FanoutCursor{}, false, fmt.Errorf("cursorfile: read %s: %w", name, err)
		}
		c, derr := decode(b)
		if derr == nil {
			return c, true, nil
		}
		if attempt == rereadCount {
			return ports.FanoutCursor{}, false, fmt.Errorf("cursorfile: %s: %w: %w", name, domain.ErrCursorCorrupt, derr)
		}
		time.Sleep(rereadPause) // the writer's one write is short: let it land
	}
}

// Store persists c: in place over a fixed record, else by replacing the
// file whole.
func (s *Store) Store(parent domain.PartitionRef, child string, c ports.FanoutCursor) error {
	if err := validNames(parent, child); err != nil {
		return err
	}
	if err := validCursor(c); err != nil {
		return fmt.Errorf("%w: %w", domain.ErrInvalidRecord, err)
	}
	rec, fixed := encode(c)
	name := s.path(parent, child)
	if fixed {
		done, err := s.writeInPlace(parent, name, rec)
		if done || err != nil {
			return err
		}
	}
	return s.replace(parent, name, rec)
}

// writeInPlace overwrites a fixed record with rec (one write at 0 and a
// sync). done is false when the file is absent or holds another format.
func (s *Store) writeInPlace(parent domain.PartitionRef, name string, rec []byte) (done bool, err error) {
	f, err := s.fs.OpenRW(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cursorfile: open %s: %w", name, err)
	}
	defer f.Close()
	if fixed, err := holdsFixed(f); err != nil || !fixed {
		return false, err
	}
	if err := s.mustBeOurs(parent); err != nil { // checked with the file held: a later rename takes the file along
		return false, err
	}
	if _, err := f.WriteAt(rec, 0); err != nil {
		return false, fmt.Errorf("cursorfile: write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return false, fmt.Errorf("cursorfile: sync %s: %w", name, err)
	}
	return true, nil
}

// holdsFixed reports whether f is a 256-byte record starting as a CRC
// record (whatever its CRC: a torn one is overwritten whole).
func holdsFixed(f vfs.File) (bool, error) {
	size, err := f.Size()
	if err != nil || size != recordBytes {
		return false, err
	}
	head := make([]byte, len(crcPrefix))
	if _, err := f.ReadAt(head, 0); err != nil {
		return false, fmt.Errorf("cursorfile: read %s: %w", f.Name(), err)
	}
	return bytes.Equal(head, []byte(crcPrefix)), nil
}

// replace writes rec whole: temp file, sync, marker check, rename,
// directory sync.
func (s *Store) replace(parent domain.PartitionRef, name string, rec []byte) error {
	if err := s.mustBeOurs(parent); err != nil {
		return err
	}
	tmp := name + tempSuffix
	_ = s.fs.Remove(tmp) // a crashed predecessor's leftover
	f, err := s.fs.Create(tmp)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cursorfile: create %s: %w", tmp, domain.ErrPartitionDirGone)
	}
	if err != nil {
		return fmt.Errorf("cursorfile: create %s: %w", tmp, err)
	}
	_, werr := f.WriteAt(rec, 0)
	if werr == nil {
		werr = f.Sync()
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = s.fs.Remove(tmp)
		return fmt.Errorf("cursorfile: write %s: %w", tmp, err)
	}
	if err := s.mustBeOurs(parent); err != nil {
		_ = s.fs.Remove(tmp)
		return err
	}
	if err := s.fs.Rename(tmp, name); err != nil {
		_ = s.fs.Remove(tmp)
		return fmt.Errorf("cursorfile: rename %s: %w", tmp, err)
	}
	if err := s.fs.SyncDir(filepath.Dir(name)); err != nil {
		return fmt.Errorf("cursorfile: sync directory of %s: %w", name, err)
	}
	return nil
}

// Remove deletes child's cursor file on parent; absent is fine.
func (s *Store) Remove(parent domain.PartitionRef, child string) error {
	if err := validNames(parent, child); err != nil {
		return err
	}
	if ours, err := s.ours(parent); err != nil || !ours {
		return err
	}
	name := s.path(parent, child)
	if err := s.fs.Remove(name); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("cursorfile: remove %s: %w", name, err)
	}
	if err := s.fs.SyncDir(filepath.Dir(name)); err != nil {
		return fmt.Errorf("cursorfile: sync directory of %s: %w", name, err)
	}
	return nil
}

// Children lists the children with a cursor file on parent, sorted.
func (s *Store) Children(parent domain.PartitionRef) ([]string, error) {
	if err := validRef(parent); err != nil {
		return nil, err
	}
	if ours, err := s.ours(parent); err != nil || !ours {
		return nil, err
	}
	names, err := s.fs.List(s.dir(parent))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cursorfile: list %s: %w", s.dir(parent), err)
	}
	var out []string
	for _, n := range names {
		child, ok := strings.CutPrefix(n, filePrefix)
		if child, ok2 := strings.CutSuffix(child, fileSuffix); ok && ok2 && domain.ValidateTopicName(child) == nil {
			out = append(out, child)
		}
	}
	return out, nil
}

// ours reports whether parent's directory exists and belongs to its
// incarnation (an empty id accepts any). It is partdir.Ours but for the
// marker read, capped like a cursor file, and the stat error, which names
// the directory.
func (s *Store) ours(parent domain.PartitionRef) (bool, error) {
	if _, err := s.fs.Stat(s.dir(parent)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("cursorfile: stat %s: %w", s.dir(parent), err)
	}
	if parent.TopicID == "" {
		return true, nil
	}
	b, err := readCapped(s.fs, segmentlog.MarkerPath(s.dataDir, parent.Topic))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cursorfile: read incarnation marker of %s: %w", parent.Topic, err)
	}
	return domain.TopicID(strings.TrimSpace(string(b))) == parent.TopicID, nil
}

// mustBeOurs is ours as an error: domain.ErrPartitionDirGone when not.
func (s *Store) mustBeOurs(parent domain.PartitionRef) error {
	ours, err := s.ours(parent)
	if err != nil {
		return err
	}
	if !ours {
		return fmt.Errorf("cursorfile: %s of incarnation %q: %w", s.dir(parent), parent.TopicID, domain.ErrPartitionDirGone)
	}
	return nil
}

// readCapped reads a small file whole; one past fileMaxBytes is corrupt
// and not read.
func readCapped(fsys vfs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	if size > fileMaxBytes {
		return nil, fmt.Errorf("cursorfile: %s holds %d bytes: %w", name, size, domain.ErrCursorCorrupt)
	}
	buf := make([]byte, size)
	if _, err := f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf, nil
}

func validRef(ref domain.PartitionRef) error {
	if err := partdir.ValidRef(ref); err != nil {
		return fmt.Errorf("cursorfile: %w", err)
	}
	return nil
}

func validNames(ref domain.PartitionRef, child string) error {
	if err := validRef(ref); err != nil {
		return err
	}
	if err := domain.ValidateTopicName(child); err != nil {
		return fmt.Errorf("cursorfile: child: %w: %w", domain.ErrInvalidRecord, err)
	}
	return nil
}
