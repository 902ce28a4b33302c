package vfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrDirLocked reports that another process holds a data directory's lock:
// two nodes must never write one directory's WAL and segments.
var ErrDirLocked = errors.New("data directory is locked by another process")

// dirLockFile is the file under a data directory whose advisory lock a node
// holds for its whole life.
const dirLockFile = "LOCK"

// DirLock is a held data directory lock.
type DirLock struct{ f *os.File }

// LockDir creates dir if needed and takes an exclusive, non-blocking lock
// on dir/LOCK. The kernel drops the lock when the process dies, so a node
// killed with -9 never leaves a stale one.
func LockDir(dir string) (*DirLock, error) {
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return nil, fmt.Errorf("vfs: create data directory %s: %w", dir, err)
	}
	name := filepath.Join(dir, dirLockFile)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, FileMode)
	if err != nil {
		return nil, fmt.Errorf("vfs: open %s: %w", name, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, errWouldBlock) {
			return nil, fmt.Errorf("%w: %s", ErrDirLocked, dir)
		}
		return nil, fmt.Errorf("vfs: lock %s: %w", name, err)
	}
	return &DirLock{f: f}, nil
}

// Release drops the lock; closing the file releases it.
func (l *DirLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
