package offsetstore

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/narad/narad/adapters/partdir"
	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.OffsetStore = (*Store)(nil)

// Options configure a Store.
type Options struct {
	FS vfs.FS
	// DataDir is the node's data directory; partitions live under
	// DataDir/topics/<topic>/p<NNNNN>.
	DataDir string
	// MaxHeld bounds the consumer.ahead descriptors kept open (default
	// DefaultMaxHeldDescriptors).
	MaxHeld int
}

// Store is the file-backed ports.OffsetStore.
type Store struct {
	fs      vfs.FS
	dataDir string
	maxHeld int

	mu     sync.Mutex
	closed bool
	parts  map[domain.PartitionRef]*part
	held   int    // open consumer.ahead descriptors
	clock  uint64 // write recency, for descriptor eviction
}

// part is one partition's held state. mu serialises its file operations.
type part struct {
	mu        sync.Mutex
	dir       string
	primed    bool
	stranded  bool // directory missing or replaced: write nothing until Forget
	forgotten bool
	f         vfs.File // consumer.ahead, nil when not primed or evicted
	anchor    int      // slot holding the newest durable record
	anchorSeq uint64
	window    bool   // the other slot holds a record not yet synced
	lastWrite uint64 // Store.clock at the last Write
	buf       []byte
}

// New returns a Store over opts.FS. It reads nothing until asked.
func New(opts Options) (*Store, error) {
	if opts.FS == nil || opts.DataDir == "" {
		return nil, errors.New("offsetstore: FS and DataDir are required")
	}
	if opts.MaxHeld <= 0 {
		opts.MaxHeld = DefaultMaxHeldDescriptors
	}
	return &Store{
		fs: opts.FS, dataDir: opts.DataDir,
		maxHeld: opts.MaxHeld, parts: map[domain.PartitionRef]*part{},
	}, nil
}

// partitionDir names ref's directory, as adapters/segmentlog lays it out.
func (s *Store) partitionDir(ref domain.PartitionRef) string {
	return partdir.Dir(s.dataDir, ref)
}

// Load reads ref's progress from disk: the newest valid consumer.ahead slot
// and consumer.offset, the larger frontier winning.
func (s *Store) Load(ref domain.PartitionRef) (ports.ConsumerOffsets, error) {
	if err := validRef(ref); err != nil {
		return ports.NoOffsets, err
	}
	ours, err := s.ours(ref)
	if err != nil || !ours {
		return ports.NoOffsets, err
	}
	dir := s.partitionDir(ref)
	image, err := readIfExists(s.fs, filepath.Join(dir, aheadFileName))
	if err != nil {
		return ports.NoOffsets, fmt.Errorf("offsetstore: load %s: %w", ref, err)
	}
	plain, err := readIfExists(s.fs, filepath.Join(dir, offsetFileName))
	if err != nil {
		return ports.NoOffsets, fmt.Errorf("offsetstore: load %s: %w", ref, err)
	}
	out := ports.NoOffsets
	if best, r := newest(image); best >= 0 {
		out = r.offsets
	}
	if v := decodeOffsetFile(plain); v > out.Committed {
		out.Committed = v
	}
	out.AckedAhead = above(out.AckedAhead, out.Committed)
	return out, nil
}

// Write puts o in ref's window slot (page cache only), priming first.
func (s *Store) Write(ref domain.PartitionRef, o ports.ConsumerOffsets) error {
	p, err := s.lock(ref)
	if err != nil {
		return err
	}
	defer p.mu.Unlock()
	if err := s.ready(ref, p); err != nil || p.stranded {
		return err
	}
	encodeSlot(p.buf, record{seq: p.anchorSeq + 1, offsets: o})
	if _, err := p.f.WriteAt(p.buf, int64(1-p.anchor)*slotBytes); err != nil {
		return fmt.Errorf("offsetstore: write %s window: %w", ref, err)
	}
	p.window = true
	s.mu.Lock()
	s.clock++
	p.lastWrite = s.clock
	s.mu.Unlock()
	return nil
}

// Sync makes ref's window durable and makes it the anchor. A failed sync
// leaves the anchor alone; the caller writes the window in full again.
func (s *Store) Sync(ref domain.PartitionRef) error {
	p, err := s.lock(ref)
	if err != nil {
		return err
	}
	defer p.mu.Unlock()
	if !p.primed || p.stranded || !p.window || p.f == nil {
		return nil
	}
	if err := p.f.Sync(); err != nil {
		return fmt.Errorf("offsetstore: sync %s: %w", ref, err)
	}
	p.anchor, p.anchorSeq, p.window = 1-p.anchor, p.anchorSeq+1, false
	return nil
}

// Level overwrites ref's consumer.offset with committed (one 8-byte write
// in place) and syncs it.
func (s *Store) Level(ref domain.PartitionRef, committed int64) error {
	p, err := s.lock(ref)
	if err != nil {
		return err
	}
	defer p.mu.Unlock()
	if err := s.ready(ref, p); err != nil || p.stranded {
		return err
	}
	f, created, err := s.openPinned(ref, p, offsetFileName)
	if err != nil || f == nil {
		return err
	}
	_, werr := f.WriteAt(encodeOffsetFile(committed), 0)
	if werr == nil {
		werr = f.Sync()
	}
	if werr == nil && created {
		werr = s.fs.SyncDir(p.dir)
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("offsetstore: level %s: %w", ref, err)
	}
	return nil
}

// Forget closes ref's descriptor and drops its state. Once it returns, no
// earlier Write reaches the disk through this store.
func (s *Store) Forget(ref domain.PartitionRef) {
	s.mu.Lock()
	p, ok := s.parts[ref]
	delete(s.parts, ref)
	s.mu.Unlock()
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.forgotten = true
	s.release(p)
}

// Close closes every held descriptor; later calls fail with domain.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	parts := s.parts
	s.parts = map[domain.PartitionRef]*part{}
	s.mu.Unlock()
	var errs []error
	for _, p := range parts {
		p.mu.Lock()
		p.forgotten = true
		if p.f != nil {
			errs = append(errs, p.f.Close())
			p.f = nil
		}
		p.mu.Unlock()
	}
	return errors.Join(errs...)
}

// lock returns ref's part, created on first use, with its mutex held.
func (s *Store) lock(ref domain.PartitionRef) (*part, error) {
	if err := validRef(ref); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("offsetstore: %w", domain.ErrClosed)
	}
	p, ok := s.parts[ref]
	if !ok {
		p = &part{dir: s.partitionDir(ref), buf: make([]byte, slotBytes)}
		s.parts[ref] = p
	}
	s.mu.Unlock()
	p.mu.Lock()
	if p.forgotten {
		p.mu.Unlock()
		return s.lock(ref) // raced a Forget: start afresh
	}
	return p, nil
}

// release closes p's descriptor, if held.
func (s *Store) release(p *part) {
	if p.f == nil {
		return
	}
	_ = p.f.Close() // nothing unsynced depends on it: a closed window is rewritten or redelivered
	p.f = nil
	s.mu.Lock()
	s.held--
	s.mu.Unlock()
}

func validRef(ref domain.PartitionRef) error {
	if err := partdir.ValidRef(ref); err != nil {
		return fmt.Errorf("offsetstore: %w", err)
	}
	return nil
}

// above keeps the offsets greater than committed.
func above(offsets []int64, committed int64) []int64 {
	out := offsets[:0:0]
	for _, o := range offsets {
		if o > committed {
			out = append(out, o)
		}
	}
	return out
}

func readIfExists(fsys vfs.FS, name string) ([]byte, error) {
	b, err := vfs.ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}
