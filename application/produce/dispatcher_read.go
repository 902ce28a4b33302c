package produce

import (
	"context"
	"fmt"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// mark is the state of one sequence between the checkpoint and the read
// frontier (internals.md §3.3).
type mark uint8

const (
	// markHeld: queued on its destination or in a commit in flight.
	markHeld mark = iota
	// markSkipped: left in the WAL, to be read again by a rescan.
	markSkipped
	// markDone: committed, or discarded after the leader confirmed.
	markDone
)

// destKey is one destination: a partition of one topic incarnation.
type destKey struct {
	topic     string
	id        domain.TopicID
	partition int32
}

// dest is one destination's queue and commit state.
type dest struct {
	key      destKey
	queue    []ports.WALEntry // held records not in flight, in sequence order
	queuedAt time.Time        // when queue last became non-empty (linger)
	// busyEnd is the first busy boundary after its last commit started
	// (zero before the first): the destination is busy, and may linger,
	// until then.
	busyEnd time.Time
	skipped int     // this destination's records left in the WAL
	flight  *flight // the commit in flight, if any
	failing bool    // the last commit failed; queue holds the probe
	// unreachable is the owner the last failed commit could not reach
	// (a transport failure), "" otherwise.
	unreachable string
	// failingSince is when the first failed attempt of the current run of
	// failures started (the reroute grace runs from it).
	failingSince time.Time
	retryAt      time.Time   // no commit before this
	warned       bool        // a warning about the current trouble was logged
	rerouted     rerouteNote // what was logged about rerouting its records
}

// canTake reports whether a record may be queued on ds now: not while a
// hung commit or a failing probe holds it, nor past the queue cap.
func (ds *dest) canTake(queueCap int) bool {
	return (ds.flight == nil || !ds.flight.hung) && !(ds.failing && len(ds.queue) > 0) && len(ds.queue) < queueCap
}

// window is how many records may be held, sized to the destinations seen.
func (d *Dispatcher) window() int {
	return min(max(windowPerDestRecords*len(d.dests), windowMinRecords), windowMaxRecords)
}

func (d *Dispatcher) queueCap() int { return max(d.window()/4, queueMinCapRecords) }

// heldMax stops the reader: the window, but at least four destinations'
// worth so one hot or slow partition never takes more than a quarter.
func (d *Dispatcher) heldMax() int { return max(d.window(), 4*d.queueCap()) }

func (d *Dispatcher) lookahead() uint64 { return uint64(lookaheadWindows * d.window()) }

func (d *Dispatcher) markOf(seq uint64) *mark { return &d.marks[seq-d.base] }

func (d *Dispatcher) destOf(key destKey) *dest {
	ds, ok := d.dests[key]
	if !ok {
		ds = &dest{key: key}
		d.dests[key] = ds
	}
	return ds
}

// forget drops a destination with nothing left to do, once its busy window
// has ended (so a destination fed faster than it commits keeps lingering
// between batches; launchReady drops it later otherwise).
func (d *Dispatcher) forget(ds *dest, now time.Time) {
	if len(ds.queue) == 0 && ds.skipped == 0 && ds.flight == nil && !ds.failing && !now.Before(ds.busyEnd) {
		delete(d.dests, ds.key)
	}
}

// readForward reads newly durable records, placing each, until the window
// or the lookahead is full.
func (d *Dispatcher) readForward(ctx context.Context, views *viewCache) error {
	for d.held < d.heldMax() && d.next-d.base < d.lookahead() && d.next < d.wal.DurableNext() {
		n := min(uint64(readChunkRecords), d.lookahead()-(d.next-d.base))
		entries, err := d.wal.ReadFrom(d.next, int(n))
		if err != nil {
			return fmt.Errorf("produce: read WAL from %d: %w", d.next, err)
		}
		if len(entries) == 0 {
			return nil
		}
		for _, e := range entries {
			if e.Seq != d.next {
				return fmt.Errorf("produce: WAL read at %d returned sequence %d", d.next, e.Seq)
			}
			d.marks = append(d.marks, markHeld)
			d.next++
			d.placeNew(ctx, e, views)
		}
	}
	return nil
}

// placeNew decides a newly read record's fate: discarded (its incarnation
// confirmed gone), skipped (incarnation unsure, or its destination cannot
// take it, or an earlier record of the destination is still skipped, which
// keeps partition order), or queued on its destination or, while that
// reroutes, on a sibling's.
func (d *Dispatcher) placeNew(ctx context.Context, e ports.WALEntry, views *viewCache) {
	key := keyOf(e.Record)
	switch d.incarnation(ctx, e.Record, views) {
	case incarnationGone:
		d.discard(e)
		return
	case incarnationUnsure:
		d.skip(e, d.destOf(key))
		return
	}
	ds := d.destOf(key)
	to := d.target(ds, views)
	if ds.skipped > 0 || to == nil || !to.canTake(d.queueCap()) {
		d.skip(e, ds)
		return
	}
	d.hold(e, to)
}

// rescan re-reads the skipped records in WAL order and places those whose
// destination can take them now; a destination that cannot keeps every
// later record skipped too.
func (d *Dispatcher) rescan(ctx context.Context, views *viewCache) error {
	blocked := map[destKey]bool{}
	for i := 0; d.skipped > 0 && i < len(d.marks); {
		if d.marks[i] != markSkipped {
			i++
			continue
		}
		from := d.base + uint64(i)
		entries, err := d.wal.ReadFrom(from, readChunkRecords)
		if err != nil {
			return fmt.Errorf("produce: rescan WAL from %d: %w", from, err)
		}
		if len(entries) == 0 {
			return fmt.Errorf("produce: rescan WAL from %d: no record below %d", from, d.next)
		}
		for _, e := range entries {
			if e.Seq >= d.next {
				break
			}
			if *d.markOf(e.Seq) == markSkipped {
				d.replace(ctx, e, views, blocked)
			}
		}
		i = int(entries[len(entries)-1].Seq-d.base) + 1
	}
	return nil
}

// replace is placeNew for a record a rescan found skipped.
func (d *Dispatcher) replace(ctx context.Context, e ports.WALEntry, views *viewCache, blocked map[destKey]bool) {
	ds := d.destOf(keyOf(e.Record))
	switch d.incarnation(ctx, e.Record, views) {
	case incarnationGone:
		ds.skipped--
		d.skipped--
		d.discard(e)
		d.forget(ds, d.clock.Now())
		return
	case incarnationUnsure:
		blocked[ds.key] = true
		return
	}
	to := d.target(ds, views)
	if blocked[ds.key] || to == nil || !to.canTake(d.queueCap()) {
		blocked[ds.key] = true
		return
	}
	ds.skipped--
	d.skipped--
	d.hold(e, to)
}

func keyOf(r domain.IngressRecord) destKey {
	return destKey{topic: r.Topic, id: r.TopicID, partition: r.Partition}
}

// hold queues e on ds: its own destination, or a sibling its own reroutes
// to (the record keeps its own partition; ds's is the one committed).
func (d *Dispatcher) hold(e ports.WALEntry, ds *dest) {
	*d.markOf(e.Seq) = markHeld
	if len(ds.queue) == 0 {
		ds.queuedAt = d.clock.Now()
		if ds.queue == nil && len(d.spares) > 0 {
			ds.queue = d.spares[len(d.spares)-1]
			d.spares = d.spares[:len(d.spares)-1]
		}
	}
	ds.queue = append(ds.queue, e)
	d.held++
}

// recycle keeps the array of a landed batch for a queue to reuse. A batch
// is taken from its queue with its capacity cut at its length (takeBatch),
// so its array is its own: the queue it came from never writes into it.
func (d *Dispatcher) recycle(batch []ports.WALEntry) {
	if cap(batch) < spareQueueMinRecords || cap(batch) > spareQueueMaxRecords || len(d.spares) == spareQueuesMaxCount {
		return
	}
	clear(batch) // the records' bytes are the collector's now
	d.spares = append(d.spares, batch[:0])
}

func (d *Dispatcher) skip(e ports.WALEntry, ds *dest) {
	*d.markOf(e.Seq) = markSkipped
	ds.skipped++
	d.skipped++
}

// unhold returns held records to the WAL: they become skipped, each as its
// own partition's (wherever it was queued), to be read again in order by a
// rescan.
func (d *Dispatcher) unhold(entries []ports.WALEntry) {
	for _, e := range entries {
		*d.markOf(e.Seq) = markSkipped
		d.destOf(keyOf(e.Record)).skipped++
	}
	d.skipped += len(entries)
	d.held -= len(entries)
	if len(entries) > 0 {
		d.rescanDue = true
	}
}

// done marks committed records; the checkpoint may pass them.
func (d *Dispatcher) done(entries []ports.WALEntry) {
	for _, e := range entries {
		*d.markOf(e.Seq) = markDone
	}
	d.held -= len(entries)
}

// advance moves the checkpoint past the leading done sequences and stores
// it. A store failure pauses the dispatcher; the value is stored again on
// a later pass.
func (d *Dispatcher) advance(now time.Time) {
	n := 0
	for n < len(d.marks) && d.marks[n] == markDone {
		n++
	}
	d.marks = d.marks[n:]
	d.base += uint64(n)
	if d.base == d.stored || d.walClosed {
		return
	}
	if err := d.wal.StoreCheckpoint(d.base); err != nil {
		d.pause(now, "store the WAL checkpoint", err)
		return
	}
	d.stored = d.base
}
