package segmentlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/narad/narad/adapters/vfs"
)

// The hwm file carries a boundary only while the log is closed (see the
// package doc): written at a clean close, read at open as
// min(file, verified tail), emptied once at the first advance after an open.

// readHWMFile returns the value of an 8-byte hwm file and the file's size;
// size is -1 when the file is missing. Any other size holds no boundary.
func readHWMFile(fsys vfs.FS, path string) (value, size int64, err error) {
	b, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, -1, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) == hwmFileBytes {
		value = int64(binary.BigEndian.Uint64(b))
	}
	if value < 0 {
		return 0, 0, nil // no boundary: recover from the tail
	}
	return value, int64(len(b)), nil
}

func (l *partitionLog) hwmPath() string { return filepath.Join(l.cfg.dir, hwmFileName) }

// releaseHWMLocked empties the hwm file and fsyncs it, once per open,
// before the first advance: from then on a crash recovers the boundary from
// the verified tail, so no acknowledged record can hide behind a stale value.
func (l *partitionLog) releaseHWMLocked() error {
	if l.released {
		return nil
	}
	f, err := l.cfg.fsys.OpenRW(l.hwmPath())
	if errors.Is(err, fs.ErrNotExist) {
		l.released = true
		return nil
	}
	start := time.Now()
	if err != nil {
		err = fmt.Errorf("release hwm file: %w", err)
	} else {
		err = l.emptyHWMFile(f)
	}
	l.observeHWM(start, err)
	return err
}

// emptyHWMFile truncates the open hwm file to nothing, fsyncs and closes it.
func (l *partitionLog) emptyHWMFile(f vfs.File) error {
	defer f.Close()
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("release hwm file: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("release hwm file: fsync: %w", err)
	}
	l.released = true
	return nil
}

// observeHWM reports one hwm file write that began at start.
func (l *partitionLog) observeHWM(start time.Time, err error) {
	l.cfg.obs.HighWatermarkPersisted(l.cfg.key.topic, l.cfg.key.partition, time.Since(start), err)
}

// writeHWMLocked writes the exact high watermark at close: 8 bytes
// overwritten in place (a single sector) and fdatasync, unless the file
// already holds it.
func (l *partitionLog) writeHWMLocked() error {
	hwm := l.hwm.Load()
	if !l.released && l.fileHWM == hwm {
		return nil
	}
	start := time.Now()
	err := l.writeHWMFile(hwm)
	l.observeHWM(start, err)
	return err
}

// writeHWMFile writes hwm to the hwm file, creating it, and fsyncs.
func (l *partitionLog) writeHWMFile(hwm int64) error {
	path := l.hwmPath()
	f, err := l.cfg.fsys.OpenRW(path)
	created := false
	if errors.Is(err, fs.ErrNotExist) {
		f, err = l.cfg.fsys.Create(path)
		created = true
	}
	if err != nil {
		return fmt.Errorf("write hwm file: %w", err)
	}
	defer f.Close()
	var b [hwmFileBytes]byte
	binary.BigEndian.PutUint64(b[:], uint64(hwm))
	if _, err := f.WriteAt(b[:], 0); err != nil {
		return fmt.Errorf("write hwm file: %w", err)
	}
	if size, err := f.Size(); err != nil || size > hwmFileBytes {
		if err := f.Truncate(hwmFileBytes); err != nil {
			return fmt.Errorf("write hwm file: %w", err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write hwm file: fsync: %w", err)
	}
	if created {
		if err := l.cfg.fsys.SyncDir(l.cfg.dir); err != nil {
			return fmt.Errorf("write hwm file: sync %s: %w", l.cfg.dir, err)
		}
	}
	l.released, l.fileHWM = false, hwm
	return nil
}
