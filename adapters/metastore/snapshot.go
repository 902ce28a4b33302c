package metastore

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"
	sm "github.com/lni/dragonboat/v4/statemachine"
	"go.uber.org/zap"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Snapshot stream format (part of the replicated format):
//
//	"NMSNAP01"
//	record*:  u32 key length (≥ 1) | u32 value length | key | value
//	trailer:  u32 0 | u32 0 | u64 record count | u32 CRC-32C of every record
//
// Records are every key of the database in order, the applied index
// included, read from one pebble snapshot: memory stays bounded whatever the
// database size.
const (
	snapshotMagic    = "NMSNAP01"
	snapshotKeyMax   = 64 << 10
	snapshotValueMax = 16 << 20
	// snapshotStopCheckEvery: records between checks of the stop channel.
	snapshotStopCheckEvery = 1024
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// PrepareSnapshot pins the current state (Update is excluded meanwhile).
func (s *stateMachine) PrepareSnapshot() (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.db == nil {
		return nil, fmt.Errorf("metastore: prepare snapshot: state machine closed")
	}
	s.saves.Add(1)
	return s.db.NewSnapshot(), nil
}

// SaveSnapshot streams the pinned state to w.
func (s *stateMachine) SaveSnapshot(state any, w io.Writer, done <-chan struct{}) error {
	defer s.saves.Done()
	snap := state.(*pebble.Snapshot)
	defer snap.Close()
	it, err := snap.NewIter(nil)
	if err != nil {
		return fmt.Errorf("metastore: snapshot iterator: %w", err)
	}
	defer it.Close()
	sw := &snapshotWriter{bw: bufio.NewWriterSize(w, 64<<10), sum: crc32.New(castagnoli)}
	if _, err := sw.bw.WriteString(snapshotMagic); err != nil {
		return err
	}
	for valid := it.First(); valid; valid = it.Next() {
		if sw.count%snapshotStopCheckEvery == 0 && stopped(done) {
			return sm.ErrSnapshotStopped
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("metastore: snapshot read %q: %w", it.Key(), err)
		}
		if err := sw.record(it.Key(), v); err != nil {
			return err
		}
	}
	return sw.finish()
}

// snapshotWriter frames records into a buffered stream with a running
// checksum, reusing one header buffer (no allocation per record).
type snapshotWriter struct {
	bw    *bufio.Writer
	sum   hash.Hash32
	hdr   [8]byte
	count uint64
}

func (w *snapshotWriter) record(k, v []byte) error {
	binary.BigEndian.PutUint32(w.hdr[:4], uint32(len(k)))
	binary.BigEndian.PutUint32(w.hdr[4:], uint32(len(v)))
	for _, part := range [3][]byte{w.hdr[:], k, v} {
		w.sum.Write(part)
		if _, err := w.bw.Write(part); err != nil {
			return err
		}
	}
	w.count++
	return nil
}

// finish writes the trailer: a zero header, the record count, the checksum.
func (w *snapshotWriter) finish() error {
	var t [8 + 8 + 4]byte
	binary.BigEndian.PutUint64(t[8:16], w.count)
	binary.BigEndian.PutUint32(t[16:], w.sum.Sum32())
	if _, err := w.bw.Write(t[:]); err != nil {
		return err
	}
	return w.bw.Flush()
}

func stopped(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// RecoverFromSnapshot installs a streamed snapshot into a fresh database
// directory, then swaps it in atomically (CURRENT) and drops the old one. A
// snapshot that applied an entry type this build does not know is refused
// (ErrNewerDatabase) and the live database stays.
func (s *stateMachine) RecoverFromSnapshot(r io.Reader, done <-chan struct{}) error {
	name := s.files.nextName()
	tmp := filepath.Join(s.files.dir, name+tmpSuffix)
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("metastore: clear %s: %w", tmp, err)
	}
	if err := s.fill(tmp, r, done); err != nil {
		os.RemoveAll(tmp)
		s.log.Error("metadata snapshot refused", zap.Error(err))
		return err
	}
	if err := os.Rename(tmp, filepath.Join(s.files.dir, name)); err != nil {
		return fmt.Errorf("metastore: install snapshot: %w", err)
	}
	old := s.files.live
	if err := s.files.setCurrent(name); err != nil {
		return err
	}
	db, err := pebble.Open(s.files.current(), s.files.opts())
	if err != nil {
		return fmt.Errorf("metastore: open installed snapshot: %w", err)
	}
	m, err := readSMMeta(kvReader{db})
	if err != nil {
		db.Close()
		return err
	}
	index := m.applied
	s.restores.Add(1)
	s.swap(db, m)
	s.bumpViews(meta.AllViews)
	if err := os.RemoveAll(filepath.Join(s.files.dir, old)); err != nil {
		s.log.Warn("old metadata database not removed", zap.String("dir", old), zap.Error(err))
	}
	s.log.Info("metadata snapshot installed", zap.Uint64("applied_index", index), zap.String("dir", name))
	if s.publish != nil {
		s.publish([]ports.MetaChange{{Index: index, Restored: true}})
	}
	return nil
}

func (s *stateMachine) swap(db *pebble.DB, m smMeta) {
	s.mu.Lock()
	old := s.db
	s.db = db
	s.applied.Store(m.applied)
	s.newest.Store(uint32(m.newest))
	s.mu.Unlock()
	if old != nil {
		if err := old.Close(); err != nil {
			s.log.Warn("closing the replaced metadata database", zap.Error(err))
		}
	}
}

// fill writes the stream into a new database at dir, in bounded batches,
// and verifies the trailer before the final synced commit.
func (s *stateMachine) fill(dir string, r io.Reader, done <-chan struct{}) error {
	db, err := pebble.Open(dir, s.files.opts())
	if err != nil {
		return fmt.Errorf("metastore: create snapshot db: %w", err)
	}
	batch := db.NewBatch()
	err = readSnapshot(bufio.NewReaderSize(r, 64<<10), done, func(k, v []byte) error {
		if err := checkSnapshotRecord(k, v); err != nil {
			return err
		}
		if err := batch.Set(k, v, nil); err != nil {
			return err
		}
		if batch.Len() < snapshotBatchBytes {
			return nil
		}
		if err := batch.Commit(pebble.NoSync); err != nil {
			return err
		}
		batch.Close()
		batch = db.NewBatch()
		return nil
	})
	if err == nil {
		err = batch.Commit(pebble.Sync)
	}
	batch.Close()
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

// checkSnapshotRecord refuses, as soon as it streams by, the record saying
// the snapshot applied an entry type this build does not know.
func checkSnapshotRecord(k, v []byte) error {
	if !bytes.Equal(k, keyNewestType) {
		return nil
	}
	newest, err := decodeNewestType(v)
	if err != nil {
		return err
	}
	return checkKnownType(newest)
}

// readSnapshot parses the stream, calling put for each record, and checks
// the trailer's count and checksum.
func readSnapshot(r io.Reader, done <-chan struct{}, put func(k, v []byte) error) error {
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != snapshotMagic {
		return fmt.Errorf("bad magic %q (%v): %w", magic, err, ErrCorruptSnapshot)
	}
	sum := crc32.New(castagnoli)
	var count uint64
	for {
		if count%snapshotStopCheckEvery == 0 && stopped(done) {
			return sm.ErrSnapshotStopped
		}
		k, v, err := readRecord(r, sum)
		if err != nil {
			return err
		}
		if k == nil {
			return checkTrailer(r, count, sum.Sum32())
		}
		if err := put(k, v); err != nil {
			return fmt.Errorf("metastore: install record %d: %w", count, err)
		}
		count++
	}
}

// readRecord returns the next record, or nil key at the trailer.
func readRecord(r io.Reader, sum hash.Hash32) ([]byte, []byte, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, nil, fmt.Errorf("record header: %v: %w", err, ErrCorruptSnapshot)
	}
	kl, vl := binary.BigEndian.Uint32(hdr[:4]), binary.BigEndian.Uint32(hdr[4:])
	if kl == 0 && vl == 0 {
		return nil, nil, nil
	}
	if kl == 0 || kl > snapshotKeyMax || vl > snapshotValueMax {
		return nil, nil, fmt.Errorf("record lengths %d/%d out of bounds: %w", kl, vl, ErrCorruptSnapshot)
	}
	buf := make([]byte, int(kl)+int(vl))
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, nil, fmt.Errorf("record body: %v: %w", err, ErrCorruptSnapshot)
	}
	sum.Write(hdr[:])
	sum.Write(buf)
	return buf[:kl], buf[kl:], nil
}

func checkTrailer(r io.Reader, count uint64, crc uint32) error {
	var t [12]byte
	if _, err := io.ReadFull(r, t[:]); err != nil {
		return fmt.Errorf("trailer: %v: %w", err, ErrCorruptSnapshot)
	}
	if got := binary.BigEndian.Uint64(t[:8]); got != count {
		return fmt.Errorf("trailer counts %d records, stream held %d: %w", got, count, ErrCorruptSnapshot)
	}
	if got := binary.BigEndian.Uint32(t[8:]); got != crc {
		return fmt.Errorf("checksum %08x, computed %08x: %w", got, crc, ErrCorruptSnapshot)
	}
	return nil
}
