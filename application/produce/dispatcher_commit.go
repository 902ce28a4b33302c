package produce

import (
	"errors"
	"log/slog"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// commitResult is one destination's outcome of a commit call, reported by
// the call's goroutine with the others of its group.
type commitResult struct {
	key   destKey
	batch []ports.WALEntry
	owner string
	took  time.Duration
	err   error
}

// markHung stops counting commits in flight for hungAfterDuration against
// the limit, and returns what queued behind them to the WAL. A commit hung
// for the reroute grace (counted from its start, like a failed one's) makes
// its destination's records go to a sibling until it lands (internals.md
// §3.4: an owner that holds a commit that long, silent or slow, is not
// healthy); a rescan places those already skipped at once. The commit
// itself is never duplicated: its records wait for its outcome.
func (d *Dispatcher) markHung(now time.Time) {
	for _, ds := range d.dests {
		f := ds.flight
		if f == nil || now.Sub(f.started) < hungAfterDuration {
			continue
		}
		if !f.hung {
			f.hung = true
			d.release(f.group)
			d.unhold(ds.queue)
			ds.queue = nil
			d.log.Warn("produce commit hung; records behind it stay in the ingress WAL until it lands or the reroute grace passes",
				slog.String("topic", ds.key.topic), slog.Int("partition", int(ds.key.partition)), slog.String("owner", f.owner))
		}
		if !f.overdue && now.Sub(f.started) >= rerouteGraceDuration {
			f.overdue = true
			d.rescanDue = true
		}
	}
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
	d.release(ds.flight.group)
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
		ds.unreachable = ""
		if errors.Is(r.err, domain.ErrNotSent) || errors.Is(r.err, domain.ErrNoAnswer) {
			ds.unreachable = r.owner // the owner, not the partition: no sibling on it either
		}
		ds.retryAt = now.Add(failureBackoffDuration)
		d.warnOnce(ds, "produce commit failed; records stay in the ingress WAL and are retried", r.err)
	}
	d.forget(ds, now)
}

func (d *Dispatcher) succeeded(ds *dest, r commitResult) {
	d.done(r.batch)
	d.recycle(r.batch)
	if ds.failing || ds.warned {
		d.log.Info("produce commits to the partition recovered", slog.String("topic", ds.key.topic),
			slog.Int("partition", int(ds.key.partition)), slog.String("owner", r.owner))
	}
	ds.failing, ds.warned, ds.rerouted, ds.unreachable = false, false, noteNone, ""
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

// observe takes a commit's latency into what is known of its owner.
func (d *Dispatcher) observe(owner string, took time.Duration) {
	l := d.latency[owner]
	if l == nil {
		l = &ownerLatency{}
		d.latency[owner] = l
	}
	was := l.busy()
	l.observe(took, d.clock.Now())
	switch is := l.busy(); {
	case is && !was:
		d.busyOwners.Add(1)
	case was && !is:
		d.busyOwners.Add(-1)
	}
}

// BusyOwners is how many owners d judges short of CPU or disk, whose
// destinations wait for busy boundaries (ownerlatency.go). Safe to call
// from any goroutine.
func (d *Dispatcher) BusyOwners() int { return int(d.busyOwners.Load()) }

// warnOnce logs ds's current trouble once, until a commit succeeds.
func (d *Dispatcher) warnOnce(ds *dest, msg string, err error) {
	if ds.warned {
		return
	}
	ds.warned = true
	d.log.Warn(msg, slog.String("topic", ds.key.topic), slog.String("topic_id", string(ds.key.id)),
		slog.Int("partition", int(ds.key.partition)), slog.Any("error", err))
}
