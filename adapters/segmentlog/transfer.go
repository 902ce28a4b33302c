package segmentlog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var (
	_ ports.PartitionTransfer  = (*Store)(nil)
	_ ports.PartitionFreezer   = (*Store)(nil)
	_ ports.PartitionInstaller = (*Store)(nil)
)

// TransferListing lists ref's segments for a move's destination. Under the
// log's write lock, so no commit is half done: the high watermark, then
// every sealed segment whole (a segment is sealed only after the commit
// that filled it, so it holds committed records only) and the active one up
// to the end of its last visible frame (neither the hidden tail nor a frame
// written by a commit in flight); then the side files with their sizes.
func (s *Store) TransferListing(ref domain.PartitionRef) (ports.TransferListing, error) {
	if err := validateRef(ref); err != nil {
		return ports.TransferListing{}, err
	}
	sl := s.slotFor(ref)
	l, err := s.resolve(sl, ref.TopicID, false)
	if err != nil {
		return ports.TransferListing{}, err
	}
	out, err := l.transferSegments(ref)
	if err != nil {
		return ports.TransferListing{}, err
	}
	// The side files are listed after the lock: a directory read does not
	// belong under the lock every commit takes.
	if out.Side, err = s.sideFiles(sl.dir); err != nil {
		return ports.TransferListing{}, err
	}
	if out.Marker, err = s.readMoveMarker(sl.dir); err != nil {
		return ports.TransferListing{}, err
	}
	return out, nil
}

// transferSegments lists the boundary and the segments under the log's
// write lock.
func (l *partitionLog) transferSegments(ref domain.PartitionRef) (ports.TransferListing, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shut {
		return ports.TransferListing{}, fmt.Errorf("segmentlog: transfer listing of %s/%d: %w", ref.Topic, ref.Partition, domain.ErrLogClosed)
	}
	out := ports.TransferListing{HighWatermark: l.hwm.Load()}
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	out.Segments = make([]ports.TransferFile, len(l.segs))
	for i, seg := range l.segs {
		size := seg.sizeBytes
		if seg == l.active {
			size = l.hwmPos
		}
		out.Segments[i] = ports.TransferFile{Name: segmentName(seg.base), Size: size}
	}
	return out, nil
}

// ReadTransferChunk reads up to max bytes of ref's file name from off: a
// segment or a side file (the consumer position, a fan-out cursor), from
// the partition's own directory; the topic's incarnation is checked as for
// any open.
func (s *Store) ReadTransferChunk(ref domain.PartitionRef, name string, off int64, max int) ([]byte, error) {
	if err := validateRef(ref); err != nil {
		return nil, err
	}
	if !isTransferName(name) || off < 0 || max <= 0 {
		return nil, domain.Refuse(domain.ErrInvalidArgument, fmt.Sprintf("transfer chunk %q at %d, %d bytes: not a partition file read", name, off, max))
	}
	sl := s.slotFor(ref)
	if _, err := s.resolve(sl, ref.TopicID, false); err != nil {
		return nil, err
	}
	f, err := s.opts.FS.Open(filepath.Join(sl.dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, domain.Refuse(domain.ErrOffsetGone, fmt.Sprintf("segment %s of %s/%d is gone", name, ref.Topic, ref.Partition))
	}
	if err != nil {
		return nil, fmt.Errorf("segmentlog: transfer chunk: %w", err)
	}
	defer f.Close()
	if isSideFile(name) && s.opts.VerifySide != nil && off == 0 {
		return s.readVerifiedSide(f, name, max)
	}
	return readChunk(f, name, off, max)
}

// readChunk reads up to max bytes of f from off.
func readChunk(f vfs.File, name string, off int64, max int) ([]byte, error) {
	size, err := f.Size()
	if err != nil {
		return nil, fmt.Errorf("segmentlog: transfer chunk: %w", err)
	}
	if off >= size {
		return []byte{}, nil
	}
	buf := make([]byte, min(int64(max), size-off))
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("segmentlog: transfer chunk of %s: %w", name, err)
	}
	return buf[:n], nil
}

// readVerifiedSide reads side file name whole and checks it, reading it
// again when the check fails (a write caught halfway, internals.md §11.4),
// and refuses to ship one that never passes. A file longer than max is
// read as any chunk, unchecked: side files are a few KiB.
func (s *Store) readVerifiedSide(f vfs.File, name string, max int) ([]byte, error) {
	var err error
	for range sideReadAttempts {
		var b []byte
		if b, err = readChunk(f, name, 0, max); err != nil || int64(len(b)) == int64(max) {
			return b, err
		}
		if err = s.opts.VerifySide(name, b); err == nil {
			return b, nil
		}
		time.Sleep(sideReadRetryPause) // a writer mid-record finishes within it
	}
	return nil, domain.Refuse(domain.ErrUnavailable, fmt.Sprintf("%s does not verify: %v; retry", name, err))
}
