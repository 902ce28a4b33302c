package consume

import (
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// committer persists acked progress through the OffsetStore on two
// cadences (internals.md §5.8): every tick T it writes each changed
// partition's frontier and acked-ahead set without a sync; every
// durability interval D each partition written since is synced once, the
// syncs spread over the ticks of an interval by a hash of the partition (a
// partition that waited a whole interval goes on the next tick regardless),
// one at a time. consumer.offset is levelled at most every 30 s, and
// exactly by close.
type committer struct {
	store    ports.OffsetStore
	clock    ports.Clock
	log      *slog.Logger
	tick     time.Duration
	interval time.Duration
	slots    uint64 // ticks per interval

	dirtyMu sync.Mutex
	dirty   map[*shard]struct{}

	mu     sync.Mutex // serialises writes with forget and close
	parts  map[domain.PartitionRef]*persisted
	tickNo uint64
	warned map[string]time.Time
}

// persisted is what the committer knows of one partition's files.
type persisted struct {
	sh         *shard
	rewrite    bool // a sync failed: write the window in full again
	slot       uint64
	written    int64     // frontier of the newest Write
	unsynced   bool      // a Write is not synced yet
	since      time.Time // when the oldest unsynced Write happened
	levelled   int64     // frontier in consumer.offset
	levelledAt time.Time
}

func newCommitter(store ports.OffsetStore, clock ports.Clock, log *slog.Logger, interval time.Duration) *committer {
	tick := min(committerTickMax, interval)
	return &committer{
		store: store, clock: clock, log: log, tick: tick, interval: interval,
		slots: uint64(max(1, interval/tick)),
		dirty: map[*shard]struct{}{}, parts: map[domain.PartitionRef]*persisted{}, warned: map[string]time.Time{},
	}
}

// markDirty queues sh for the next tick; call with sh.mu held.
func (c *committer) markDirty(sh *shard) {
	if sh.dirty {
		return
	}
	sh.dirty = true
	c.dirtyMu.Lock()
	c.dirty[sh] = struct{}{}
	c.dirtyMu.Unlock()
}

func (c *committer) takeDirty() []*shard {
	c.dirtyMu.Lock()
	defer c.dirtyMu.Unlock()
	out := make([]*shard, 0, len(c.dirty))
	for sh := range c.dirty {
		out = append(out, sh)
	}
	clear(c.dirty)
	return out
}

// runTick writes every changed partition, then syncs the partitions whose
// turn it is.
func (c *committer) runTick() {
	start := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.parts {
		if p.rewrite {
			p.rewrite = false
			c.write(p.sh, start)
		}
	}
	for _, sh := range c.takeDirty() {
		c.write(sh, start)
	}
	c.tickNo++
	turn := c.tickNo % c.slots
	for ref, p := range c.parts {
		switch {
		case p.unsynced && (p.slot == turn || start.Sub(p.since) >= c.interval):
			c.sync(ref, p, start)
		case !p.unsynced && p.slot == turn && p.levelled != p.written:
			c.level(ref, p, start)
		}
	}
	if took := c.clock.Now().Sub(start); took > c.tick {
		c.warn("slow", "offset committer tick slower than its period: persisted offsets lag acks", slog.Duration("took", took))
	}
}

// write puts sh's snapshot in the page cache; a failure re-queues it.
func (c *committer) write(sh *shard, now time.Time) {
	sh.mu.Lock()
	if sh.gone {
		sh.mu.Unlock()
		return
	}
	sh.dirty = false
	snap := sh.snapshot()
	sh.mu.Unlock()
	p := c.part(sh)
	if err := c.store.Write(sh.ref, snap); err != nil {
		c.warn("write", "offset write failed; retrying next tick", slog.String("partition", sh.ref.String()), slog.String("error", err.Error()))
		c.requeue(sh)
		return
	}
	p.written = snap.Committed
	if !p.unsynced {
		p.unsynced, p.since = true, now
	}
}

func (c *committer) requeue(sh *shard) {
	sh.mu.Lock()
	if !sh.gone {
		c.markDirty(sh)
	}
	sh.mu.Unlock()
}

// sync makes a partition's writes durable and levels consumer.offset when
// its 30 s are up. A failed sync leaves the partition owing a full rewrite.
func (c *committer) sync(ref domain.PartitionRef, p *persisted, now time.Time) {
	if err := c.store.Sync(ref); err != nil {
		c.warn("sync", "offset sync failed; rewriting next tick", slog.String("partition", ref.String()), slog.String("error", err.Error()))
		p.rewrite = true // the page cache is not trusted after a failed sync
		return
	}
	p.unsynced = false
	p.sh.recv.durable.Store(p.written)
	if now.Sub(p.since) > 2*c.interval {
		c.warn("late", "offset writeout waited more than twice the durability interval", slog.String("partition", ref.String()))
	}
	c.level(ref, p, now)
}

// level brings consumer.offset level with the newest written frontier, at
// most every offsetLevelInterval.
func (c *committer) level(ref domain.PartitionRef, p *persisted, now time.Time) {
	if p.levelled == p.written || (!p.levelledAt.IsZero() && now.Sub(p.levelledAt) < offsetLevelInterval) {
		return
	}
	if err := c.store.Level(ref, p.written); err != nil {
		c.warn("level", "consumer.offset levelling failed", slog.String("partition", ref.String()), slog.String("error", err.Error()))
		return
	}
	p.levelled, p.levelledAt = p.written, now
}

func (c *committer) part(sh *shard) *persisted {
	ref := sh.ref
	p, ok := c.parts[ref]
	if !ok {
		h := fnv.New64a()
		_, _ = fmt.Fprintf(h, "%s/%s/%d", ref.Topic, ref.TopicID, ref.Partition)
		p = &persisted{sh: sh, slot: h.Sum64() % c.slots, written: -2, levelled: -2}
		c.parts[ref] = p
	}
	return p
}

// forget drops a partition: after it returns, no earlier snapshot is
// written (the tick holds mu while it writes).
func (c *committer) forget(ref domain.PartitionRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.parts, ref)
	c.store.Forget(ref)
}

// close writes, syncs and levels every live shard's progress exactly, then
// closes the store.
func (c *committer) close(shards []*shard) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	var errs []error
	for _, sh := range shards {
		sh.mu.Lock()
		gone, snap := sh.gone, ports.ConsumerOffsets{}
		if !gone {
			snap = sh.snapshot()
		}
		sh.mu.Unlock()
		if gone {
			continue
		}
		p := c.part(sh)
		if err := c.store.Write(sh.ref, snap); err != nil {
			errs = append(errs, err)
			continue
		}
		p.written = snap.Committed
		if err := c.store.Sync(sh.ref); err != nil {
			errs = append(errs, err)
			continue
		}
		p.unsynced = false
		if err := c.store.Level(sh.ref, snap.Committed); err != nil {
			errs = append(errs, err)
		}
		p.levelled, p.levelledAt = snap.Committed, now
	}
	errs = append(errs, c.store.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("consume: persist offsets at close: %w", err)
	}
	return nil
}

// warn logs at most once a minute per kind.
func (c *committer) warn(kind, msg string, attrs ...any) {
	now := c.clock.Now()
	if last, ok := c.warned[kind]; ok && now.Sub(last) < committerWarnInterval {
		return
	}
	c.warned[kind] = now
	c.log.Warn(msg, attrs...)
}
