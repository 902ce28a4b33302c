package fake

import (
	"fmt"
	"sort"
	"sync"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.FanoutCursors = (*FanoutCursors)(nil)

// FanoutCursors is an in-memory ports.FanoutCursors. Every partition
// directory exists until RemoveDir (MakeDir brings it back); Corrupt makes
// a file unreadable until the next Store. Files are keyed by parent name
// and partition (not incarnation), as on disk. Safe for concurrent use.
type FanoutCursors struct {
	mu       sync.Mutex
	files    map[cursorKey]ports.FanoutCursor
	corrupt  map[cursorKey]bool
	goneDirs map[cursorDir]bool
}

type cursorDir struct {
	topic     string
	partition int32
}

type cursorKey struct {
	dir   cursorDir
	child string
}

func keyOf(ref domain.PartitionRef, child string) cursorKey {
	return cursorKey{dir: cursorDir{ref.Topic, ref.Partition}, child: child}
}

// NewFanoutCursors returns a store holding no cursor file.
func NewFanoutCursors() *FanoutCursors {
	return &FanoutCursors{files: map[cursorKey]ports.FanoutCursor{}, corrupt: map[cursorKey]bool{},
		goneDirs: map[cursorDir]bool{}}
}

// Put writes a cursor file directly, as a previous process (or another
// epoch's cursor) would have left it.
func (f *FanoutCursors) Put(parent domain.PartitionRef, child string, c ports.FanoutCursor) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[keyOf(parent, child)] = c
	delete(f.corrupt, keyOf(parent, child))
}

// Get returns the file's content without the Load checks.
func (f *FanoutCursors) Get(parent domain.PartitionRef, child string) (ports.FanoutCursor, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.files[keyOf(parent, child)]
	return c, ok
}

// Corrupt makes the file fail its checksum until it is stored again.
func (f *FanoutCursors) Corrupt(parent domain.PartitionRef, child string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.corrupt[keyOf(parent, child)] = true
}

// RemoveDir deletes parent's directory with every cursor in it: later
// Stores fail with domain.ErrPartitionDirGone.
func (f *FanoutCursors) RemoveDir(parent domain.PartitionRef) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := cursorDir{parent.Topic, parent.Partition}
	f.goneDirs[d] = true
	for k := range f.files {
		if k.dir == d {
			delete(f.files, k)
		}
	}
}

// MakeDir makes parent's directory exist again.
func (f *FanoutCursors) MakeDir(parent domain.PartitionRef) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.goneDirs, cursorDir{parent.Topic, parent.Partition})
}

// Load returns the file, ok=false when absent.
func (f *FanoutCursors) Load(parent domain.PartitionRef, child string) (ports.FanoutCursor, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := keyOf(parent, child)
	if f.corrupt[k] {
		return ports.FanoutCursor{}, false, fmt.Errorf("fake cursors: %s/%s: %w", parent, child, domain.ErrCursorCorrupt)
	}
	c, ok := f.files[k]
	return c, ok, nil
}

// Store writes the file unless its directory is gone.
func (f *FanoutCursors) Store(parent domain.PartitionRef, child string, c ports.FanoutCursor) error {
	if c.Epoch == "" || c.NextOffset < 0 || domain.ValidateTopicName(child) != nil {
		return fmt.Errorf("fake cursors: %s %+v: %w", child, c, domain.ErrInvalidRecord)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	k := keyOf(parent, child)
	if f.goneDirs[k.dir] {
		return fmt.Errorf("fake cursors: %s: %w", parent, domain.ErrPartitionDirGone)
	}
	f.files[k] = c
	delete(f.corrupt, k)
	return nil
}

// Remove deletes the file.
func (f *FanoutCursors) Remove(parent domain.PartitionRef, child string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.files, keyOf(parent, child))
	delete(f.corrupt, keyOf(parent, child))
	return nil
}

// Children lists the children with a file on parent, sorted.
func (f *FanoutCursors) Children(parent domain.PartitionRef) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := cursorDir{parent.Topic, parent.Partition}
	var out []string
	for k := range f.files {
		if k.dir == d {
			out = append(out, k.child)
		}
	}
	for k := range f.corrupt {
		if _, ok := f.files[k]; !ok && k.dir == d {
			out = append(out, k.child)
		}
	}
	sort.Strings(out)
	return out, nil
}
