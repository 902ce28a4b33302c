package schedule

import "slices"

// Partition is one partition's schedule as its owner sees it: the starts of
// the bucket files on disk (sorted), the one loaded bucket, and the count of
// scheduled records. Memory is one int64 per non-empty bucket plus the
// loaded bucket's pending entries: it does not grow with records scheduled
// for later minutes.
type Partition struct {
	starts []int64
	loaded *Bucket
	count  int64
}

// Note records that the bucket starting at startMs holds n more records.
func (p *Partition) Note(startMs int64, n int) {
	if i, ok := slices.BinarySearch(p.starts, startMs); !ok {
		p.starts = slices.Insert(p.starts, i, startMs)
	}
	p.count += int64(n)
}

// Loaded is the loaded bucket, nil when none is.
func (p *Partition) Loaded() *Bucket { return p.loaded }

// Load makes b the loaded bucket (it must be the earliest on disk).
func (p *Partition) Load(b *Bucket) { p.loaded = b }

// Released counts n records moved to the log.
func (p *Partition) Released(n int) { p.count -= int64(n) }

// Forget drops the bucket starting at startMs (its file was deleted),
// unloading it if loaded.
func (p *Partition) Forget(startMs int64) {
	if i, ok := slices.BinarySearch(p.starts, startMs); ok {
		p.starts = slices.Delete(p.starts, i, i+1)
	}
	if p.loaded != nil && p.loaded.StartMs == startMs {
		p.loaded = nil
	}
}

// Earliest is the start of the earliest bucket on disk; ok is false when
// the partition holds none.
func (p *Partition) Earliest() (int64, bool) {
	if len(p.starts) == 0 {
		return 0, false
	}
	return p.starts[0], true
}

// Buckets is the number of bucket files; Count the records scheduled.
func (p *Partition) Buckets() int { return len(p.starts) }
func (p *Partition) Count() int64 { return p.count }

// SetCount sets the record count (after counting the files at start).
func (p *Partition) SetCount(n int64) { p.count = n }

// Next is when the partition next needs a release pass: the loaded bucket's
// earliest pending record, or, once it is empty, the end of its window (to
// delete it; the next bucket starts no earlier); with
// nothing loaded, the earliest bucket's start. ok is false when the
// partition holds no bucket.
func (p *Partition) Next() (int64, bool) {
	if p.loaded == nil {
		return p.Earliest()
	}
	if at, ok := p.loaded.Next(); ok {
		return at, true
	}
	return p.loaded.EndMs(), true // buckets are aligned: the next starts no earlier
}
