package receivelog

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/narad/narad/adapters/partdir"
	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/deadletter"
	"github.com/narad/narad/ports"
)

var _ ports.ReceiveLog = (*Store)(nil)

// Options configure a Store.
type Options struct {
	FS vfs.FS
	// DataDir is the node's data directory; partitions live under
	// DataDir/topics/<topic>/p<NNNNN>.
	DataDir string
	// MaxHeld bounds the consumer.receives descriptors kept open between
	// Appends (default DefaultMaxHeldDescriptors).
	MaxHeld int
}

// Store is the file-backed ports.ReceiveLog.
type Store struct {
	fs      vfs.FS
	dataDir string
	maxHeld int

	mu     sync.Mutex
	closed bool
	parts  map[domain.PartitionRef]*part
	held   int    // open consumer.receives descriptors
	clock  uint64 // use recency, for descriptor eviction
}

// part is one partition's state. mu serialises its file operations.
type part struct {
	mu        sync.Mutex
	dir       string
	primed    bool // end is known and the file is durable up to it (less a dirty tail)
	stranded  bool // directory missing or replaced: write nothing until Forget
	forgotten bool
	f         vfs.File // consumer.receives, nil when not primed or evicted
	end       int64    // good end of the file, once primed
	size      int64    // what Size answers: the good end last written or read
	dirty     bool     // bytes past end may have been written: cut before appending
	syncDir   bool     // the directory entry of the file may not be durable yet
	lastUse   uint64   // Store.clock at the last Append or Compact (under Store.mu)
	buf       []byte
}

// New returns a Store over opts.FS. It reads nothing until asked.
func New(opts Options) (*Store, error) {
	if opts.FS == nil || opts.DataDir == "" {
		return nil, errors.New("receivelog: FS and DataDir are required")
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

// Load reads ref's records up to the first frame that fails its check. A
// partition with no file, or not served here, answers none.
func (s *Store) Load(ref domain.PartitionRef) ([]deadletter.Record, error) {
	p, err := s.lock(ref)
	if err != nil {
		return nil, err
	}
	defer p.mu.Unlock()
	ours, err := s.ours(ref)
	if err != nil || !ours {
		return nil, err
	}
	b, err := vfs.ReadFile(s.fs, filepath.Join(p.dir, receivesFileName))
	if errors.Is(err, fs.ErrNotExist) {
		b, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("receivelog: load %s: %w", ref, err)
	}
	if p.primed && int64(len(b)) > p.end {
		b = b[:p.end] // past it: a failed Append, cut before the next one
	}
	recs, good := decodeFrames(b)
	p.size = good
	return recs, nil
}

// Append writes recs' frames at the good end of ref's file in one write
// and makes them durable with one fdatasync, priming first.
func (s *Store) Append(ref domain.PartitionRef, recs []deadletter.Record) error {
	if err := validRecords(ref, recs); err != nil {
		return err
	}
	p, err := s.lock(ref)
	if err != nil {
		return err
	}
	defer p.mu.Unlock()
	if len(recs) == 0 {
		return nil
	}
	if err := s.ready(ref, p); err != nil {
		return err
	}
	buf := encodeFrames(p.buf[:0], recs)
	defer p.keep(buf)
	p.dirty = true // until the write is durable, bytes past end are suspect
	if _, err := p.f.WriteAt(buf, p.end); err != nil {
		return fmt.Errorf("receivelog: append to %s: %w", ref, err)
	}
	if err := p.f.Sync(); err != nil {
		return fmt.Errorf("receivelog: sync %s: %w", ref, err)
	}
	p.dirty = false
	p.end += int64(len(buf))
	p.size = p.end
	s.touch(p)
	return nil
}

// Compact replaces ref's file by one holding exactly live: a temporary
// file, fdatasync, rename, directory sync. The held descriptor is the new
// file's from the rename on.
func (s *Store) Compact(ref domain.PartitionRef, live []deadletter.Record) error {
	if err := validRecords(ref, live); err != nil {
		return err
	}
	p, err := s.lock(ref)
	if err != nil {
		return err
	}
	defer p.mu.Unlock()
	f, err := s.createTmp(ref, p)
	if err != nil {
		return err
	}
	tmp := filepath.Join(p.dir, tmpFileName)
	buf := encodeFrames(p.buf[:0], live)
	defer p.keep(buf)
	_, err = f.WriteAt(buf, 0)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = s.fs.Rename(tmp, filepath.Join(p.dir, receivesFileName))
	}
	if errors.Is(err, fs.ErrNotExist) {
		p.stranded = true // the directory went away under us
	}
	if err != nil {
		_ = f.Close()
		if !p.stranded {
			_ = s.fs.Remove(tmp) // an ignored leftover if it stays
		}
		// Which file the name holds is not certain after a failed rename:
		// the next Append primes again from the name.
		s.release(p)
		p.primed = false
		return errors.Join(fmt.Errorf("receivelog: compact %s: %w", ref, err), strandedErr(ref, p))
	}
	// The file at the name is the new one: hold it, whatever comes next.
	s.release(p)
	s.hold(p, f)
	p.primed, p.dirty, p.syncDir = true, false, true
	p.end, p.size = int64(len(buf)), int64(len(buf))
	s.touch(p)
	if err := s.fs.SyncDir(p.dir); err != nil {
		return fmt.Errorf("receivelog: compact %s: sync directory: %w", ref, err)
	}
	p.syncDir = false
	return nil
}

// Size is the good length of ref's file as last written or read (0 when
// unknown).
func (s *Store) Size(ref domain.PartitionRef) int64 {
	s.mu.Lock()
	p, ok := s.parts[ref]
	s.mu.Unlock()
	if !ok {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.forgotten {
		return 0
	}
	return p.size
}

// Forget closes ref's descriptor and drops its state. Once it returns, no
// earlier Append reaches the disk through this store.
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
		return nil, fmt.Errorf("receivelog: %w", domain.ErrClosed)
	}
	p, ok := s.parts[ref]
	if !ok {
		p = &part{dir: s.partitionDir(ref)}
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

// touch marks p as just used, for descriptor eviction.
func (s *Store) touch(p *part) {
	s.mu.Lock()
	s.clock++
	p.lastUse = s.clock
	s.mu.Unlock()
}

// keep retains buf for p's next encode unless it grew large.
func (p *part) keep(buf []byte) {
	if cap(buf) <= keptBufferBytesMax {
		p.buf = buf[:0]
	} else {
		p.buf = nil
	}
}

// strandedErr is what Append and Compact answer for a stranded partition
// (nil while p is not stranded).
func strandedErr(ref domain.PartitionRef, p *part) error {
	if !p.stranded {
		return nil
	}
	return fmt.Errorf("receivelog: %s: directory missing or of another incarnation, not served here: %w", ref, domain.ErrLogClosed)
}

func validRef(ref domain.PartitionRef) error {
	if err := partdir.ValidRef(ref); err != nil {
		return fmt.Errorf("receivelog: %w", err)
	}
	return nil
}

// validRecords refuses a batch holding a record no Table could have made.
func validRecords(ref domain.PartitionRef, recs []deadletter.Record) error {
	for i, r := range recs {
		if !r.Valid() {
			return fmt.Errorf("receivelog: %s: record %d of %d (kind %d, offset %d, count %d, reason %d bytes) is not valid: %w",
				ref, i, len(recs), r.Kind, r.Offset, r.Count, len(r.Reason), domain.ErrInvalidArgument)
		}
	}
	return nil
}
