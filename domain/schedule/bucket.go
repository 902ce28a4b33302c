package schedule

import "container/heap"

// BucketWidthMs is the span of deliver-at times one bucket file holds: a
// record scheduled for t lives in the bucket starting at BucketStart(t).
const BucketWidthMs = 60_000

// BucketStart is the start (unix ms) of the bucket holding deliverAtMs.
func BucketStart(deliverAtMs int64) int64 { return deliverAtMs - deliverAtMs%BucketWidthMs }

// Entry locates one scheduled record inside its bucket file.
type Entry struct {
	Ordinal     uint32 // index of the record among its bucket's records
	DeliverAtMs int64
	Pos         int64  // where the record's frame starts in the file
	Size        uint32 // the frame's length
}

// Bucket is the pending records of the one bucket a partition has loaded:
// a min-heap by deliver-at (then ordinal), so the due ones come out first.
type Bucket struct {
	StartMs int64
	pending entryHeap
}

// NewBucket returns the bucket starting at startMs holding pending.
func NewBucket(startMs int64, pending []Entry) *Bucket {
	b := &Bucket{StartMs: startMs, pending: append(entryHeap(nil), pending...)}
	heap.Init(&b.pending)
	return b
}

// EndMs is the first deliver-at past the bucket.
func (b *Bucket) EndMs() int64 { return b.StartMs + BucketWidthMs }

// Len is the number of records not yet released.
func (b *Bucket) Len() int { return len(b.pending) }

// Add makes es pending (newly appended records, or ones a failed release
// gives back).
func (b *Bucket) Add(es ...Entry) {
	for _, e := range es {
		heap.Push(&b.pending, e)
	}
}

// Due removes and returns, earliest first, up to maxCount records whose
// deliver-at is at or before nowMs. Nothing comes out early.
func (b *Bucket) Due(nowMs int64, maxCount int) []Entry {
	var out []Entry
	for len(out) < maxCount && len(b.pending) > 0 && b.pending[0].DeliverAtMs <= nowMs {
		out = append(out, heap.Pop(&b.pending).(Entry))
	}
	return out
}

// Next is the earliest pending deliver-at; ok is false when none is.
func (b *Bucket) Next() (int64, bool) {
	if len(b.pending) == 0 {
		return 0, false
	}
	return b.pending[0].DeliverAtMs, true
}

// Finished reports whether the bucket can be deleted at nowMs: nothing is
// pending and no record can be scheduled into it any more (its window has
// passed, so a new record for it is due at once and goes to the log).
func (b *Bucket) Finished(nowMs int64) bool { return len(b.pending) == 0 && nowMs >= b.EndMs() }

type entryHeap []Entry

func (h entryHeap) Len() int { return len(h) }
func (h entryHeap) Less(i, j int) bool {
	if h[i].DeliverAtMs != h[j].DeliverAtMs {
		return h[i].DeliverAtMs < h[j].DeliverAtMs
	}
	return h[i].Ordinal < h[j].Ordinal
}
func (h entryHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *entryHeap) Push(x any)   { *h = append(*h, x.(Entry)) }
func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
