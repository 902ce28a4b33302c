package produce

import (
	"context"
	"log/slog"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// viewCache reads each topic, partition owner and the member table from
// the local replica at most once per pass, and carries the pass's time.
type viewCache struct {
	store   Store
	now     time.Time
	topics  map[string]topicView
	owners  map[destKey]ownerView
	members map[string]string // member id -> status; nil until read
	targets map[destKey]*dest // reroute target per origin (nil: none)
	// troubled holds the owners with a commit hung, or failing on the
	// transport, on some destination; nil until asked (dispatcher_reroute.go).
	troubled map[string]bool
}

type topicView struct {
	t   meta.Topic
	ok  bool
	err error
}

func newViewCache(store Store, now time.Time) *viewCache {
	return &viewCache{store: store, now: now, topics: map[string]topicView{}, owners: map[destKey]ownerView{}, targets: map[destKey]*dest{}}
}

func (v *viewCache) get(name string) topicView {
	tv, ok := v.topics[name]
	if !ok {
		tv.t, tv.ok, tv.err = v.store.Topic(name)
		v.topics[name] = tv
	}
	return tv
}

// live reports whether the replica shows incarnation id of the topic (an
// empty id, a record older than incarnations, matches any).
func (tv topicView) live(id domain.TopicID) bool {
	return tv.err == nil && tv.ok && (id == "" || string(id) == tv.t.ID)
}

// incarnationState is what the dispatcher knows of a record's incarnation.
type incarnationState int

const (
	incarnationLive incarnationState = iota
	// incarnationUnsure: not live here, not confirmed gone: keep the record.
	incarnationUnsure
	// incarnationGone: the leader confirmed it gone: discard the record.
	incarnationGone
)

// goneKey names one incarnation of one topic.
type goneKey struct {
	topic string
	id    domain.TopicID
}

// incarnations remembers confirmed-gone incarnations (their records go
// without asking again), unconfirmed answers for confirmMemoDuration, the
// confirmations in flight, and the discards to log.
type incarnations struct {
	gone      map[goneKey]bool
	memo      map[goneKey]time.Time // no new question before
	asking    map[goneKey]bool
	discarded map[goneKey]int
}

// goneMaxCount bounds the remembered gone incarnations; past it the set
// starts empty again (forgetting costs a confirmation, never a record).
const goneMaxCount = 4096

func newIncarnations() incarnations {
	return incarnations{gone: map[goneKey]bool{}, memo: map[goneKey]time.Time{}, asking: map[goneKey]bool{}, discarded: map[goneKey]int{}}
}

// incarnation classifies rec: live on the local replica, confirmed gone,
// or unsure (a confirmation is asked for, at most once per
// confirmMemoDuration per incarnation). Story F3: local absence alone never
// discards.
func (d *Dispatcher) incarnation(ctx context.Context, rec domain.IngressRecord, views *viewCache) incarnationState {
	tv := views.get(rec.Topic)
	if tv.live(rec.TopicID) {
		return incarnationLive
	}
	k := goneKey{topic: rec.Topic, id: rec.TopicID}
	if d.incarn.gone[k] {
		return incarnationGone
	}
	if tv.err == nil && !d.draining {
		d.ask(ctx, k)
	}
	return incarnationUnsure
}

// confirmResult is a confirmation's answer.
type confirmResult struct {
	key  goneKey
	gone bool
	why  string
	err  error
}

// ask starts a confirmation that incarnation k is gone, unless one is in
// flight or an unconfirmed answer is fresh.
func (d *Dispatcher) ask(ctx context.Context, k goneKey) {
	if d.incarn.asking[k] || d.clock.Now().Before(d.incarn.memo[k]) {
		return
	}
	d.incarn.asking[k] = true
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		r := d.confirmGone(ctx, k)
		select {
		case d.confirms <- r:
		case <-ctx.Done():
		}
	}()
}

// confirmGone runs on its own goroutine: gone only when the replica is
// caught up and the leader confirms (barrier, then re-read).
func (d *Dispatcher) confirmGone(ctx context.Context, k goneKey) confirmResult {
	if !d.store.CaughtUp() {
		return confirmResult{key: k, why: "replica not caught up"}
	}
	dec := d.confirmer.TopicGone(ctx, k.topic, k.id)
	return confirmResult{key: k, gone: dec.Destroy, why: dec.Reason, err: dec.Err}
}

// confirmed records a confirmation's answer; a gone incarnation's skipped
// records are discarded by the next rescan.
func (d *Dispatcher) confirmed(r confirmResult) {
	delete(d.incarn.asking, r.key)
	if !r.gone {
		d.incarn.memo[r.key] = d.clock.Now().Add(confirmMemoDuration)
		d.log.Debug("produce dispatcher keeps records of an unconfirmed incarnation",
			slog.String("topic", r.key.topic), slog.String("topic_id", string(r.key.id)),
			slog.String("reason", r.why), slog.Any("error", r.err))
		return
	}
	if len(d.incarn.gone) >= goneMaxCount {
		clear(d.incarn.gone)
	}
	delete(d.incarn.memo, r.key)
	d.incarn.gone[r.key] = true
	d.rescanDue = true
}

// discard drops one record of a confirmed-gone incarnation.
func (d *Dispatcher) discard(e ports.WALEntry) {
	*d.markOf(e.Seq) = markDone
	d.incarn.discarded[goneKey{topic: e.Record.Topic, id: e.Record.TopicID}]++
}

// logDiscards writes one warning per incarnation discarded in this pass.
func (d *Dispatcher) logDiscards() {
	for k, n := range d.incarn.discarded {
		d.log.Warn("produce dispatcher discarded records of a deleted topic",
			slog.String("topic", k.topic), slog.String("topic_id", string(k.id)), slog.Int("records", n))
	}
	clear(d.incarn.discarded)
}
