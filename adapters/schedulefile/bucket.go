package schedulefile

import (
	"errors"
	"fmt"
	"io"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/schedule"
)

// Entry locates one record of a bucket file: its Ordinal among the file's
// record frames (from 0, in file order), its deliver-at, and its frame's
// Pos and Size. It is domain/schedule's Entry, which the owner's pending
// set orders.
type Entry = schedule.Entry

// Bucket is one open bucket file. Not safe for concurrent use: the caller
// holds a lock around every call.
type Bucket struct {
	fsys vfs.FS
	path string
	f    vfs.File

	end       int64  // the good end: whole frames Open accepts, nothing after
	syncedEnd int64  // the good end as of the last fdatasync that succeeded
	records   int    // acknowledged record frames
	pending   int    // of those, not fired
	fired     bitset // fired ordinals, grown to records

	dirty        bool // a failed write or sync may have left bytes past end
	syncFailed   bool // an fdatasync failed since syncedEnd: cut back to it
	entryDurable bool // the file's directory entry is known durable
	closed       bool
	buf          []byte // encode buffer kept between writes
}

// Append writes recs (only DeliverAtMs, Key and Payload are used) as one
// batch at the good end: their record frames and a commit frame, in one
// WriteAt, then one fdatasync. It returns their entries. Every record must
// have a non-empty payload and DeliverAtMs > 0 (else domain.ErrInvalidRecord)
// and fit the caps (else domain.ErrRecordTooLarge); then nothing is written.
// After a failed write or sync nothing is acknowledged (the caller retries
// the same records) and the next write first cuts the file back.
func (b *Bucket) Append(recs []domain.Record) ([]Entry, error) {
	if err := b.usable("append to"); err != nil {
		return nil, err
	}
	if err := b.validBatch(recs); err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, nil
	}
	if err := b.ready(true); err != nil {
		return nil, fmt.Errorf("schedulefile: append to %s: %w", b.path, err)
	}
	entries := make([]Entry, len(recs))
	buf := b.buf[:0]
	for i, r := range recs {
		start := len(buf)
		buf = appendRecordFrame(buf, r.DeliverAtMs, r.Key, r.Payload)
		entries[i] = Entry{
			Ordinal:     uint32(b.records + i),
			DeliverAtMs: r.DeliverAtMs,
			Pos:         b.end + int64(start),
			Size:        uint32(len(buf) - start),
		}
	}
	buf = appendCommitFrame(buf, uint32(len(recs)))
	defer b.keep(buf)
	b.dirty = true // until the batch is durable, bytes past end are suspect
	if _, err := b.f.WriteAt(buf, b.end); err != nil {
		return nil, fmt.Errorf("schedulefile: append %d records to %s: %w", len(recs), b.path, err)
	}
	if err := b.f.Sync(); err != nil {
		b.syncFailed = true
		return nil, fmt.Errorf("schedulefile: sync %s: %w", b.path, err)
	}
	b.dirty = false
	b.end += int64(len(buf))
	b.syncedEnd = b.end
	b.records += len(recs)
	b.pending += len(recs)
	b.fired.grow(b.records)
	return entries, nil
}

// Read returns the record e names: Key (nil when empty) and Payload share
// one fresh allocation, DeliverAtMs is set. It rereads the frame and
// checks its checksum and that it is a record frame of e's DeliverAtMs;
// a mismatch wraps domain.ErrRecordCorrupt. An entry outside the good
// end wraps domain.ErrInvalidArgument.
func (b *Bucket) Read(e Entry) (domain.Record, error) {
	if err := b.usable("read"); err != nil {
		return domain.Record{}, err
	}
	if e.Pos < 0 || e.Size <= frameHeaderBytes || e.Size > frameMaxBytes || e.Pos+int64(e.Size) > b.end {
		return domain.Record{}, fmt.Errorf("schedulefile: read %s: entry of %d bytes at %d is outside the good %d bytes: %w",
			b.path, e.Size, e.Pos, b.end, domain.ErrInvalidArgument)
	}
	buf := make([]byte, e.Size)
	n, err := b.f.ReadAt(buf, e.Pos)
	switch {
	case n == len(buf):
	case err == nil || errors.Is(err, io.EOF):
		return domain.Record{}, fmt.Errorf("schedulefile: read %s: %d of %d bytes at %d: %w", b.path, n, len(buf), e.Pos, domain.ErrRecordCorrupt)
	default:
		return domain.Record{}, fmt.Errorf("schedulefile: read %s at %d: %w", b.path, e.Pos, err)
	}
	f, size, ok := decodeFrame(buf)
	if !ok || size != len(buf) || f.kind != kindRecord || f.deliverAtMs != e.DeliverAtMs {
		return domain.Record{}, fmt.Errorf("schedulefile: read %s: frame of %d bytes at %d is not record %d (deliver at %d): %w",
			b.path, e.Size, e.Pos, e.Ordinal, e.DeliverAtMs, domain.ErrRecordCorrupt)
	}
	rec := domain.Record{DeliverAtMs: f.deliverAtMs, Payload: f.payload[:len(f.payload):len(f.payload)]}
	if len(f.key) > 0 {
		rec.Key = f.key[:len(f.key):len(f.key)]
	}
	return rec, nil
}

// MarkFired appends fired frames naming ordinals (released by the caller
// into the partition log) without fdatasync: a process kill keeps them,
// a machine crash may lose them, and then those records are released
// again (at least once). Every ordinal must be below Records(), else
// nothing is written (domain.ErrInvalidArgument). Ordinals already fired
// are fine. One frame holds firedFrameOrdinalsMax ordinals; more take
// several frames, still in one write.
func (b *Bucket) MarkFired(ordinals []uint32) error {
	if err := b.usable("mark fired in"); err != nil {
		return err
	}
	for _, o := range ordinals {
		if int64(o) >= int64(b.records) {
			return fmt.Errorf("schedulefile: mark fired in %s: ordinal %d of %d records: %w", b.path, o, b.records, domain.ErrInvalidArgument)
		}
	}
	if len(ordinals) == 0 {
		return nil
	}
	if err := b.ready(false); err != nil {
		return fmt.Errorf("schedulefile: mark fired in %s: %w", b.path, err)
	}
	buf := appendFiredFrames(b.buf[:0], ordinals)
	defer b.keep(buf)
	if _, err := b.f.WriteAt(buf, b.end); err != nil {
		b.dirty = true
		return fmt.Errorf("schedulefile: mark %d fired in %s: %w", len(ordinals), b.path, err)
	}
	b.end += int64(len(buf))
	for _, o := range ordinals {
		if b.fired.set(o) {
			b.pending--
		}
	}
	return nil
}

// Records is the number of acknowledged record frames the file holds.
func (b *Bucket) Records() int { return b.records }

// Pending is the number of acknowledged records not fired.
func (b *Bucket) Pending() int { return b.pending }

// Size is the good end, in bytes.
func (b *Bucket) Size() int64 { return b.end }

// Close closes the file; later calls but Close (a no-op) fail with
// domain.ErrClosed. Fired frames not yet synced stay in the page cache.
func (b *Bucket) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if err := b.f.Close(); err != nil {
		return fmt.Errorf("schedulefile: close %s: %w", b.path, err)
	}
	return nil
}

func (b *Bucket) usable(op string) error {
	if b.closed {
		return fmt.Errorf("schedulefile: %s %s: %w", op, b.path, domain.ErrClosed)
	}
	return nil
}

// validBatch refuses a batch holding a record the format cannot hold, or
// one that would take the file past recordsMax records.
func (b *Bucket) validBatch(recs []domain.Record) error {
	if int64(b.records)+int64(len(recs)) > recordsMax {
		return fmt.Errorf("schedulefile: append to %s: %d records past the %d a bucket holds: %w",
			b.path, len(recs), int64(recordsMax)-int64(b.records), domain.ErrRecordTooLarge)
	}
	for i, r := range recs {
		var why string
		target := domain.ErrInvalidRecord
		switch {
		case len(r.Payload) == 0:
			why = "empty payload"
		case r.DeliverAtMs <= 0:
			why = fmt.Sprintf("deliver_at_ms %d is not positive", r.DeliverAtMs)
		case len(r.Key) > recordKeyMaxBytes:
			why, target = fmt.Sprintf("key of %d bytes, over %d", len(r.Key), recordKeyMaxBytes), domain.ErrRecordTooLarge
		case len(r.Payload) > recordPayloadMaxBytes:
			why, target = fmt.Sprintf("payload of %d bytes, over %d", len(r.Payload), recordPayloadMaxBytes), domain.ErrRecordTooLarge
		default:
			continue
		}
		return fmt.Errorf("schedulefile: append to %s: record %d of %d: %s: %w", b.path, i, len(recs), why, target)
	}
	return nil
}

// keep retains buf for the next encode unless it grew large.
func (b *Bucket) keep(buf []byte) {
	if cap(buf) <= keptBufferBytesMax {
		b.buf = buf[:0]
	} else {
		b.buf = nil
	}
}
