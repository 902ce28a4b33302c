package produce

import (
	"log/slog"

	"github.com/narad/narad/domain/meta"
)

// Reroute (internals.md §3.4). A destination reroutes while its owner is
// marked dead, once its commits have failed for rerouteGraceDuration since
// the start of the first failed attempt (time, not attempts, so a short
// handoff or restart does not scatter records), or while a commit of it
// has hung for rerouteGraceDuration since it started (an owner cut off the
// network answers nothing: its commit neither lands nor fails until the
// transport gives up on it). Its records then go to the first sibling
// partition p+1, p+2, … mod N whose owner membership reports alive and is
// healthy (no commit to it hung, none failing on the transport) and whose
// own commits are neither failing nor hung; with none they stay in the WAL. A record keeps its place in the WAL under its
// own partition: holding it on the sibling's queue is the rewrite, and if
// that commit fails it returns to the WAL as its own partition's again.
//
// A failing destination keeps one record as its probe and retries it on
// its own partition once a second; the first success sends traffic back.
// A commit in flight is never duplicated onto a sibling. Refusals that say
// the partition is elsewhere or is another incarnation (domain.ErrNotOwner,
// domain.ErrTopicNotFound) are not failures: they never lead to a reroute.

// ownerView is one partition's owner as the replica shows it.
type ownerView struct {
	owner string
	ok    bool // assigned, to this incarnation
}

// owner reads key's owner once per pass: ok=false when the partition is
// unassigned, the row belongs to another incarnation, or the read failed.
func (v *viewCache) owner(key destKey) (string, bool) {
	ov, seen := v.owners[key]
	if !seen {
		row, ok, err := v.store.Assignment(key.topic, key.partition)
		switch {
		case err != nil || !ok || row.Owner == "":
		case row.TopicID != "" && key.id != "" && row.TopicID != string(key.id):
		default:
			ov = ownerView{owner: row.Owner, ok: true}
		}
		v.owners[key] = ov
	}
	return ov.owner, ov.ok
}

// status is node's member status ("" when the table has no such member or
// cannot be read).
func (v *viewCache) status(node string) string {
	if v.members == nil {
		v.members = map[string]string{}
		ms, err := v.store.Members()
		if err == nil {
			for _, m := range ms {
				v.members[m.ID] = m.Status
			}
		}
	}
	return v.members[node]
}

// dead reports whether membership marks node dead (this node never is).
func (d *Dispatcher) dead(views *viewCache, node string) bool {
	return node != d.self && views.status(node) == meta.StatusDead
}

// alive reports whether membership reports node alive (this node always).
func (d *Dispatcher) alive(views *viewCache, node string) bool {
	return node == d.self || views.status(node) == meta.StatusAlive
}

// rerouting reports whether records of ds go to a sibling now: its commits
// have failed, or its commit in flight has hung, for the reroute grace, or
// its owner is marked dead.
func (d *Dispatcher) rerouting(ds *dest, views *viewCache) bool {
	switch {
	case ds.failing && views.now.Sub(ds.failingSince) >= rerouteGraceDuration:
		return true
	case ds.flight != nil && ds.flight.hung && views.now.Sub(ds.flight.started) >= rerouteGraceDuration:
		return true
	}
	owner, ok := views.owner(ds.key)
	return ok && d.dead(views, owner)
}

// troubled reports whether owner has a commit hung, or failing on the
// transport, on any destination: none of its partitions is a healthy
// sibling then, though its other destinations learn of it only by their
// own commits.
func (d *Dispatcher) troubled(views *viewCache, owner string) bool {
	if views.troubled == nil {
		views.troubled = map[string]bool{}
		for _, ds := range d.dests {
			if ds.flight != nil && ds.flight.hung {
				views.troubled[ds.flight.owner] = true
			}
			if ds.failing && ds.unreachable != "" {
				views.troubled[ds.unreachable] = true
			}
		}
	}
	return views.troubled[owner]
}

// needsProbe reports whether the next record of a failing ds must stay on
// it as its probe: none is queued or in flight, and its owner is not
// marked dead (a dead owner is not probed; it returns through membership).
func (d *Dispatcher) needsProbe(ds *dest, views *viewCache) bool {
	if !ds.failing || len(ds.queue) > 0 || ds.flight != nil {
		return false
	}
	owner, ok := views.owner(ds.key)
	return !ok || !d.dead(views, owner)
}

// target is where a record of origin ds goes now: ds itself, or while ds
// reroutes a sibling, or nil when it reroutes and no sibling qualifies
// (the record stays in the WAL).
func (d *Dispatcher) target(ds *dest, views *viewCache) *dest {
	if !d.rerouting(ds, views) || d.needsProbe(ds, views) {
		return ds
	}
	c, seen := views.targets[ds.key]
	if !seen {
		c = d.sibling(ds, views)
		views.targets[ds.key] = c
		d.warnReroute(ds, c)
	}
	return c
}

// sibling finds the first partition after ds's (mod the topic's count)
// whose owner is alive and not troubled and whose commits are neither
// failing nor hung.
func (d *Dispatcher) sibling(ds *dest, views *viewCache) *dest {
	tv := views.get(ds.key.topic)
	if !tv.live(ds.key.id) || tv.t.Partitions < 2 {
		return nil
	}
	n := tv.t.Partitions
	for i := int32(1); i < n; i++ {
		key := ds.key
		key.partition = (ds.key.partition%n + i) % n
		owner, ok := views.owner(key)
		if !ok || !d.alive(views, owner) || d.troubled(views, owner) {
			continue
		}
		if c := d.dests[key]; c != nil && (c.failing || (c.flight != nil && c.flight.hung)) {
			continue
		}
		return d.destOf(key)
	}
	return nil
}

// rerouteNote is what was last logged about a destination's reroute.
type rerouteNote uint8

const (
	noteNone rerouteNote = iota
	noteNowhere
	noteSibling
)

// warnReroute logs when ds starts sending its records elsewhere, or finds
// nowhere to send them, once each until a commit to it succeeds.
func (d *Dispatcher) warnReroute(ds *dest, to *dest) {
	note := noteSibling
	if to == nil {
		note = noteNowhere
	}
	if ds.rerouted == note {
		return
	}
	ds.rerouted = note
	attrs := []any{slog.String("topic", ds.key.topic), slog.String("topic_id", string(ds.key.id)), slog.Int("partition", int(ds.key.partition))}
	if to == nil {
		d.log.Warn("produce commits to the partition are failing or hung, or its owner is down, and no sibling partition can take its records; they stay in the ingress WAL", attrs...)
		return
	}
	d.log.Warn("produce commits to the partition are failing or hung, or its owner is down; its records go to a sibling partition",
		append(attrs, slog.Int("to_partition", int(to.key.partition)))...)
}
