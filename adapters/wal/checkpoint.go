package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/narad/narad/adapters/vfs"
)

// checkpoint is the checkpoint file: 8 bytes, u64 big-endian, the first
// sequence not yet committed. Stores overwrite the 8 bytes in place (a process
// crash keeps the value); flush makes the last store durable with one
// fdatasync.
type checkpoint struct {
	path string

	flushMu sync.Mutex // one flush at a time; stores go on meanwhile

	mu      sync.Mutex
	f       vfs.File
	stored  uint64 // last value written in place
	durable uint64 // last value made durable
	err     error  // first failed fdatasync; later flushes keep failing
	closed  bool

	poke chan struct{} // capacity 1: a store is waiting for its flush
}

// readCheckpoint returns the value in dir's checkpoint file; a missing file
// is 0, any size but 8 bytes is corrupt.
func readCheckpoint(fsys vfs.FS, dir string) (uint64, bool, error) {
	path := filepath.Join(dir, checkpointFileName)
	b, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read checkpoint: %w", err)
	}
	if len(b) != checkpointFileBytes {
		return 0, false, &CorruptionError{File: path, Offset: 0,
			Reason: fmt.Sprintf("checkpoint file of %d bytes, want %d", len(b), checkpointFileBytes)}
	}
	return binary.BigEndian.Uint64(b), true, nil
}

// openCheckpoint opens the checkpoint file for in-place stores, creating it
// (temp file, fsync, rename, directory fsync) with value when it is missing.
func openCheckpoint(fsys vfs.FS, dir string, value uint64, exists bool) (*checkpoint, error) {
	path := filepath.Join(dir, checkpointFileName)
	if !exists {
		var b [checkpointFileBytes]byte
		binary.BigEndian.PutUint64(b[:], value)
		if err := vfs.WriteFileAtomic(fsys, path, b[:]); err != nil {
			return nil, fmt.Errorf("create checkpoint: %w", err)
		}
	}
	f, err := fsys.OpenRW(path)
	if err != nil {
		return nil, fmt.Errorf("open checkpoint: %w", err)
	}
	return &checkpoint{path: path, f: f, stored: value, durable: value, poke: make(chan struct{}, 1)}, nil
}

// value returns the last stored value.
func (c *checkpoint) value() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stored
}

// store overwrites the file's 8 bytes with seq and asks for a flush.
func (c *checkpoint) store(seq uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if seq < c.stored {
		return fmt.Errorf("store checkpoint %d below %d: %w", seq, c.stored, ErrCheckpointBackwards)
	}
	if seq == c.stored {
		return nil
	}
	var b [checkpointFileBytes]byte
	binary.BigEndian.PutUint64(b[:], seq)
	if _, err := c.f.WriteAt(b[:], 0); err != nil {
		return fmt.Errorf("store checkpoint %d: %w", seq, err)
	}
	c.stored = seq
	select {
	case c.poke <- struct{}{}:
	default:
	}
	return nil
}

// flush makes the stored value durable and returns the durable value. Stores
// landing during the fdatasync are covered by the next flush. After a failed
// fdatasync the durable value never moves again (a later success would prove
// nothing).
func (c *checkpoint) flush() (uint64, error) {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	c.mu.Lock()
	want, durable, err, closed := c.stored, c.durable, c.err, c.closed
	c.mu.Unlock()
	if err != nil || want == durable || closed {
		return durable, err
	}
	if err := c.f.Sync(); err != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.err = fmt.Errorf("sync checkpoint: %w", err)
		return durable, c.err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.durable = want
	return want, nil
}

// close flushes and closes the file.
func (c *checkpoint) close() error {
	_, ferr := c.flush()
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	cerr := c.f.Close()
	if cerr != nil {
		cerr = fmt.Errorf("close checkpoint: %w", cerr)
	}
	return errors.Join(ferr, cerr)
}
