package produce

import (
	"context"
	"fmt"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// flight is one destination's commit in flight.
type flight struct {
	started time.Time
	owner   string // the node the commit went to
	hung    bool
	// overdue: hung for the reroute grace; the records of its destination
	// go to a sibling meanwhile (internals.md §3.4).
	overdue bool
	group   *commitGroup
}

// commitGroup is one commit call: a local commit, or the batches of one or
// more destinations sent to one remote owner together. It holds one place
// against commitsInFlightMaxCount until its first result settles or it
// hangs.
type commitGroup struct {
	counted bool
}

// release gives g's place against the in-flight limit back, once.
func (d *Dispatcher) release(g *commitGroup) {
	if g.counted {
		g.counted = false
		d.inflight--
	}
}

// launchReady starts a commit on every destination that has records, no
// commit in flight, no backoff pending and no reason to linger, within the
// in-flight limit. Batches for one remote owner leave together, one call
// per commitGroupMaxCount destinations or commit byte budget: an RPC costs
// the owner and this node more than the records in it. A failing
// destination's probe goes alone, on the probe budget.
func (d *Dispatcher) launchReady(now time.Time, views *viewCache) {
	remote := map[string][]*dest{}
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
		owner, ok := d.readyOwner(now, ds, views)
		switch {
		case !ok:
		case owner == d.self || ds.failing:
			d.launch(now, owner, []*dest{ds})
		default:
			remote[owner] = append(remote[owner], ds)
		}
	}
	for owner, group := range remote {
		for len(group) > 0 && d.inflight < commitsInFlightMaxCount {
			group = group[d.launch(now, owner, group):]
		}
	}
}

// readyOwner resolves ds's owner and reports whether its next batch should
// leave now. A batch whose incarnation is no longer live goes back to the
// WAL (the rescan asks the leader); an unassigned partition keeps its
// records and looks again; an owner marked dead is not sent to: its records
// go back to the WAL, for the rescan to reroute them (internals.md §3.4,
// §3.5); a lingering destination waits.
func (d *Dispatcher) readyOwner(now time.Time, ds *dest, views *viewCache) (string, bool) {
	if !views.get(ds.key.topic).live(ds.key.id) {
		d.unhold(ds.queue)
		ds.queue = nil
		return "", false
	}
	owner, ok := views.owner(ds.key)
	if !ok {
		ds.retryAt = now.Add(resolveRetryInterval)
		d.warnOnce(ds, "partition unassigned; its records stay in the ingress WAL", nil)
		return "", false
	}
	if d.dead(views, owner) {
		d.unhold(ds.queue)
		ds.queue = nil
		return "", false
	}
	if d.lingers(ds, owner, now) {
		return "", false
	}
	return owner, true
}

// launch sends the next batch of as many of dests (all for owner) as one
// call carries, and returns how many it took: at least one, at most
// commitGroupMaxCount, within commitBudgetBytes together (the first batch
// always goes, alone if it fills the budget).
func (d *Dispatcher) launch(now time.Time, owner string, dests []*dest) int {
	group := &commitGroup{counted: true}
	var items []groupItem
	budget := commitBudgetBytes
	for _, ds := range dests {
		if len(items) == commitGroupMaxCount || (len(items) > 0 && recordBytes(ds.queue[0]) > budget) {
			break
		}
		batch, size := d.takeBatch(ds, budget)
		budget -= size
		ds.busyEnd = busyUntil(now, d.busyStep(owner))
		ds.flight = &flight{started: now, owner: owner, group: group}
		items = append(items, groupItem{key: ds.key, batch: batch})
	}
	d.inflight++
	d.running += len(items)
	timeout := commitTimeout
	if len(items) == 1 && dests[0].failing {
		timeout = probeTimeout
	}
	d.wg.Add(1)
	go d.commit(owner, items, timeout)
	return len(items)
}

// groupItem is one destination's batch in a commit call.
type groupItem struct {
	key   destKey
	batch []ports.WALEntry
}

func (it groupItem) request() ports.CommitRequest {
	return ports.CommitRequest{Topic: it.key.topic, TopicID: it.key.id, Partition: it.key.partition, Records: records(it.batch)}
}

// commit runs on its own goroutine: local owners through the Committer,
// others through the peer RPC (one batch, or several in one call). It
// reports every item's outcome at once.
func (d *Dispatcher) commit(owner string, items []groupItem, timeout time.Duration) {
	defer d.wg.Done()
	ctx, cancel := context.WithTimeout(d.commitCtx, timeout)
	defer cancel()
	start := d.clock.Now()
	errs := make([]error, len(items))
	switch {
	case owner == d.self:
		_, errs[0] = d.local.CommitBatch(ctx, items[0].request())
	case len(items) == 1:
		_, errs[0] = d.peers.CommitBatch(ctx, owner, items[0].request())
	default:
		reqs := make([]ports.CommitRequest, len(items))
		for i, it := range items {
			reqs[i] = it.request()
		}
		outcomes := d.peers.CommitBatches(ctx, owner, reqs)
		for i := range errs {
			if len(outcomes) != len(reqs) { // a broken answer acknowledges nothing
				errs[i] = fmt.Errorf("produce: %d outcomes for %d batches from %s: %w", len(outcomes), len(reqs), owner, domain.ErrNoAnswer)
				continue
			}
			errs[i] = outcomes[i].Err
		}
	}
	took := d.clock.Now().Sub(start)
	results := make([]commitResult, len(items))
	for i, it := range items {
		results[i] = commitResult{key: it.key, batch: it.batch, owner: owner, took: took, err: errs[i]}
	}
	d.results <- results
}

// settleAll applies one commit call's outcomes and folds its latency into
// its owner's average once, if any batch landed.
func (d *Dispatcher) settleAll(results []commitResult) {
	landed := false
	for _, r := range results {
		d.settle(r)
		landed = landed || r.err == nil
	}
	if landed {
		d.observe(results[0].owner, results[0].took)
	}
}

// takeBatch takes the head of ds's queue within the record count and
// budget bytes, at least one record (story F20), and returns it with its
// size.
func (d *Dispatcher) takeBatch(ds *dest, budget int) ([]ports.WALEntry, int) {
	n, size := 0, 0
	for n < len(ds.queue) && n < commitMaxRecords {
		next := size + recordBytes(ds.queue[n])
		if n > 0 && next > budget {
			break
		}
		size = next
		n++
	}
	batch := ds.queue[:n:n]
	ds.queue = ds.queue[n:]
	if len(ds.queue) == 0 {
		ds.queue = nil
	} else {
		ds.queuedAt = d.clock.Now()
	}
	return batch, size
}

// recordBytes is what e adds to a commit, for the byte budget.
func recordBytes(e ports.WALEntry) int {
	return len(e.Record.Key) + len(e.Record.Payload) + recordOverheadBytes
}

func records(batch []ports.WALEntry) []domain.Record {
	out := make([]domain.Record, len(batch))
	for i, e := range batch {
		out[i] = domain.Record{Key: e.Record.Key, Payload: e.Record.Payload, DeliverAtMs: e.Record.DeliverAtMs}
	}
	return out
}
