package produce

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// commitResult is one commit's outcome, reported by its goroutine.
type commitResult struct {
	key   destKey
	batch []ports.WALEntry
	owner string
	took  time.Duration
	err   error
}

// markHung stops counting commits in flight for hungAfterDuration against
// the limit, and returns what queued behind them to the WAL.
func (d *Dispatcher) markHung(now time.Time) {
	for _, ds := range d.dests {
		if ds.flight == nil || ds.flight.hung || now.Sub(ds.flight.started) < hungAfterDuration {
			continue
		}
		ds.flight.hung = true
		d.inflight--
		d.unhold(ds.queue)
		ds.queue = nil
		d.log.Warn("produce commit hung; records behind it stay in the ingress WAL",
			slog.String("topic", ds.key.topic), slog.Int("partition", int(ds.key.partition)))
	}
}

// launchReady starts a commit on every destination that has records, no
// commit in flight and no backoff pending, within the in-flight limit.
func (d *Dispatcher) launchReady(now time.Time, views *viewCache) {
	for _, ds := range d.dests {
		if len(ds.queue) == 0 {
			d.forget(ds, now) // one whose busy window ended
			continue
		}
		if d.inflight >= commitsInFlightMaxCount {
			return
		}
		if ds.flight != nil || now.Before(ds.retryAt) {
			continue
		}
		d.launch(now, ds, views)
	}
}

// launch resolves ds's owner and sends its next batch. A batch whose
// incarnation is no longer live goes back to the WAL (the rescan asks the
// leader); an unassigned partition keeps its records and looks again; an
// owner marked dead is not sent to: its records go back to the WAL, for
// the rescan to reroute them (internals.md §3.4, §3.5).
func (d *Dispatcher) launch(now time.Time, ds *dest, views *viewCache) {
	if !views.get(ds.key.topic).live(ds.key.id) {
		d.unhold(ds.queue)
		ds.queue = nil
		return
	}
	owner, ok := views.owner(ds.key)
	if !ok {
		ds.retryAt = now.Add(resolveRetryInterval)
		d.warnOnce(ds, "partition unassigned; its records stay in the ingress WAL", nil)
		return
	}
	if d.dead(views, owner) {
		d.unhold(ds.queue)
		ds.queue = nil
		return
	}
	if d.lingers(ds, owner, now) {
		return
	}
	batch := d.takeBatch(ds)
	ds.busyEnd = busyUntil(now, d.busyStep(owner))
	ds.flight = &flight{started: now}
	d.inflight++
	d.running++
	timeout := commitTimeout
	if ds.failing {
		timeout = probeTimeout
	}
	req := ports.CommitRequest{Topic: ds.key.topic, TopicID: ds.key.id, Partition: ds.key.partition, Records: records(batch)}
	d.wg.Add(1)
	go d.commit(req, owner, batch, timeout)
}

// commit runs on its own goroutine: local owners through the Committer,
// others through the peer RPC.
func (d *Dispatcher) commit(req ports.CommitRequest, owner string, batch []ports.WALEntry, timeout time.Duration) {
	defer d.wg.Done()
	ctx, cancel := context.WithTimeout(d.commitCtx, timeout)
	defer cancel()
	start := d.clock.Now()
	var err error
	if owner == d.self {
		_, err = d.local.CommitBatch(ctx, req)
	} else {
		_, err = d.peers.CommitBatch(ctx, owner, req)
	}
	key := destKey{topic: req.Topic, id: req.TopicID, partition: req.Partition}
	d.results <- commitResult{key: key, batch: batch, owner: owner, took: d.clock.Now().Sub(start), err: err}
}

// takeBatch takes the head of ds's queue within the record count and byte
// budget, at least one record (story F20).
func (d *Dispatcher) takeBatch(ds *dest) []ports.WALEntry {
	n, size := 0, 0
	for n < len(ds.queue) && n < commitMaxRecords {
		rec := ds.queue[n].Record
		size += len(rec.Key) + len(rec.Payload) + recordOverheadBytes
		if n > 0 && size > commitBudgetBytes {
			break
		}
		n++
	}
	batch := ds.queue[:n:n]
	ds.queue = ds.queue[n:]
	if len(ds.queue) == 0 {
		ds.queue = nil
	} else {
		ds.queuedAt = d.clock.Now()
	}
	return batch
}

func records(batch []ports.WALEntry) []domain.Record {
	out := make([]domain.Record, len(batch))
	for i, e := range batch {
		out[i] = domain.Record{Key: e.Record.Key, Payload: e.Record.Payload}
	}
	return out
}

// settle applies a commit's outcome. Success marks the batch done. An
// incarnation refusal returns everything to the WAL for the rescan's
// incarnation check. A not-owner answer keeps the batch and looks the
// owner up again. Neither counts as a failure: the owner answered that the
// records belong elsewhere, not that it cannot take them, so they never
// lead to a reroute. Any other failure keeps the first record as a probe,
// returns the rest to the WAL, retries after failureBackoffDuration, and
// starts the reroute grace if it is the first of a run.
func (d *Dispatcher) settle(r commitResult) {
	ds := d.dests[r.key]
	if !ds.flight.hung {
		d.inflight--
	}
	started := ds.flight.started
	ds.flight = nil
	d.running--
	now := d.clock.Now()
	switch {
	case r.err == nil:
		d.succeeded(ds, r)
	case errors.Is(r.err, domain.ErrTopicNotFound):
		d.unhold(append(r.batch, ds.queue...))
		ds.queue = nil
		ds.failing = false
		ds.retryAt = now.Add(failureBackoffDuration)
		d.log.Warn("produce commit refused: the owner has no such topic incarnation; records stay in the ingress WAL",
			slog.String("topic", r.key.topic), slog.String("topic_id", string(r.key.id)),
			slog.Int("partition", int(r.key.partition)), slog.String("owner", r.owner), slog.Any("error", r.err))
	case errors.Is(r.err, domain.ErrNotOwner):
		d.requeue(ds, r.batch)
		ds.failing = false
		ds.retryAt = now.Add(resolveRetryInterval)
		d.warnOnce(ds, "produce commit refused by a node that no longer owns the partition; retrying", r.err)
	default:
		d.requeue(ds, r.batch[:1])
		d.unhold(append(r.batch[1:], ds.queue[1:]...))
		ds.queue = ds.queue[:1]
		if !ds.failing {
			ds.failingSince = started
		}
		ds.failing = true
		ds.retryAt = now.Add(failureBackoffDuration)
		d.warnOnce(ds, "produce commit failed; records stay in the ingress WAL and are retried", r.err)
	}
	d.forget(ds, now)
}

func (d *Dispatcher) succeeded(ds *dest, r commitResult) {
	d.done(r.batch)
	d.observe(r.owner, r.took)
	if ds.failing || ds.warned {
		d.log.Info("produce commits to the partition recovered", slog.String("topic", ds.key.topic),
			slog.Int("partition", int(ds.key.partition)), slog.String("owner", r.owner))
	}
	ds.failing, ds.warned, ds.rerouted = false, false, noteNone
	if ds.skipped > 0 {
		d.rescanDue = true
	}
}

// requeue puts batch back at the head of ds's queue.
func (d *Dispatcher) requeue(ds *dest, batch []ports.WALEntry) {
	if len(ds.queue) == 0 {
		ds.queuedAt = d.clock.Now()
	}
	ds.queue = append(append([]ports.WALEntry(nil), batch...), ds.queue...)
}

// observe folds a commit's latency into its owner's moving average.
func (d *Dispatcher) observe(owner string, took time.Duration) {
	avg, ok := d.latency[owner]
	if !ok {
		d.latency[owner] = took
		return
	}
	d.latency[owner] = avg + (took-avg)*latencyWeightPercent/100
}

// warnOnce logs ds's current trouble once, until a commit succeeds.
func (d *Dispatcher) warnOnce(ds *dest, msg string, err error) {
	if ds.warned {
		return
	}
	ds.warned = true
	d.log.Warn(msg, slog.String("topic", ds.key.topic), slog.String("topic_id", string(ds.key.id)),
		slog.Int("partition", int(ds.key.partition)), slog.Any("error", err))
}
