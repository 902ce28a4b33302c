package orphans

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/narad/narad/application/ctxwait"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// PurgeStore is what the purger reads from the local replica: its topics
// and the stream of entries it applies.
type PurgeStore interface {
	ports.MetadataTopics
	ports.MetadataWatcher
}

// PartitionRemover closes a partition's log and deletes its data, leaving
// a directory stamped with another incarnation alone (what
// ports.PartitionLogs.Remove does).
type PartitionRemover interface {
	Remove(ref domain.PartitionRef) error
}

// incarnation names one topic incarnation; an empty id stands for every
// dead directory of the name (a legacy delete names no incarnation).
type incarnation struct {
	topic string
	id    domain.TopicID
}

// Purger is the delete flow's purge on every node (internals.md §9.8): it
// follows the applied metadata entries and, for each topic delete, removes
// this node's directories of the deleted incarnation once the leader
// confirms that incarnation is gone. On any doubt it keeps the data and asks
// again later; after a snapshot restore or a lagged watch it judges every
// directory again. A directory stamped with another incarnation (a topic
// recreated under the name) is never touched.
type Purger struct {
	store   PurgeStore
	dirs    ports.TopicDirs
	logs    PartitionRemover
	confirm Confirmer
	log     *slog.Logger
	retry   time.Duration

	// Owned by Run's goroutine.
	names   map[string]domain.TopicID // the live incarnation of each name, as applied
	sizes   map[incarnation]int32     // partition counts of incarnations seen live
	pending map[incarnation]bool      // deleted incarnations not purged yet
	rescan  bool                      // judge every directory at the next pass
}

// PurgerOption adjusts a Purger.
type PurgerOption func(*Purger)

// RetryEvery sets how long a purge that could not finish (no leader, a
// directory that changed under it) waits before asking again.
func RetryEvery(d time.Duration) PurgerOption {
	return func(p *Purger) {
		if d > 0 {
			p.retry = d
		}
	}
}

// NewPurger returns a Purger; it panics on a missing dependency.
func NewPurger(store PurgeStore, dirs ports.TopicDirs, logs PartitionRemover, confirm Confirmer, log *slog.Logger,
	opts ...PurgerOption) *Purger {
	if store == nil || dirs == nil || logs == nil || confirm == nil || log == nil {
		panic("orphans: nil dependency")
	}
	p := &Purger{store: store, dirs: dirs, logs: logs, confirm: confirm, log: log, retry: purgeRetryInterval,
		names: map[string]domain.TopicID{}, sizes: map[incarnation]int32{}, pending: map[incarnation]bool{}}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Run follows the applied entries until ctx ends (nil) or the store stops
// (its error). Each subscription starts with a pass over every directory,
// so whatever was deleted while nobody watched is purged too. One Run at a
// time: the purger's state is its goroutine's.
func (p *Purger) Run(ctx context.Context) error {
	for {
		p.rescan = true
		err := p.follow(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, meta.ErrStopped):
			return err
		case errors.Is(err, meta.ErrWatchLagged):
			continue // subscribe again at once; the rescan covers the gap
		}
		p.log.Warn("purge watch failed; watching again", slog.Any("error", err))
		if !ctxwait.Sleep(ctx, purgeResubscribeDelay) {
			return nil
		}
	}
}

// follow runs one subscription: it reads the live topics, then notes each
// applied change and purges whenever a delete (or the retry timer) asks for
// a pass. It returns why the subscription ended.
func (p *Purger) follow(ctx context.Context) error {
	sub, err := p.store.Watch(purgeWatchBuffer)
	if err != nil {
		return fmt.Errorf("orphans: purge: watch: %w", err)
	}
	defer sub.Close()
	if err := p.reseed(); err != nil {
		return err
	}
	retry := time.NewTimer(p.retry)
	defer retry.Stop()
	for due := true; ; {
		if due {
			p.pass(ctx)
			due = false
			if p.owes() {
				retry.Reset(p.retry)
			} else {
				retry.Stop()
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-retry.C:
			due = p.owes()
		case ch, ok := <-sub.C():
			more, err := p.takeQueued(sub, ch, ok)
			if err != nil {
				return err
			}
			due = due || more
		}
	}
}

// takeQueued takes ch and every change queued behind it, so a burst of
// deletes costs one pass. It reports whether a pass is due, or why the
// subscription ended (ok false: ch is no change).
func (p *Purger) takeQueued(sub ports.MetaSubscription, ch ports.MetaChange, ok bool) (bool, error) {
	due := false
	for {
		if !ok {
			if err := sub.Err(); err != nil {
				return due, err
			}
			return due, meta.ErrWatchLagged // closed without a reason: start over
		}
		d, err := p.take(ch)
		if err != nil {
			return due, err
		}
		due = due || d
		select {
		case ch, ok = <-sub.C():
		default:
			return due, nil
		}
	}
}

// take notes one change; a snapshot restore may have changed any view, so
// it reads the topics again and asks for a pass over every directory.
func (p *Purger) take(ch ports.MetaChange) (bool, error) {
	if ch.Restored {
		p.rescan = true
		return true, p.reseed()
	}
	return p.note(ch), nil
}

// owes reports whether a purge is still outstanding.
func (p *Purger) owes() bool { return p.rescan || len(p.pending) > 0 }

// note records what an applied change says about incarnations and their
// partition counts; it reports whether the change deleted a topic.
func (p *Purger) note(ch ports.MetaChange) bool {
	if !ch.Result.OK() {
		return false
	}
	switch e := ch.Envelope.Event.(type) {
	case *meta.CreateTopic:
		p.created(e.Name, domain.TopicID(e.ID), e.Partitions)
	case *meta.CreateTopicWith:
		p.created(e.Name, domain.TopicID(e.ID), e.Partitions)
	case *meta.UpdateTopic:
		if id, ok := p.names[e.Name]; ok {
			p.grown(incarnation{e.Name, id}, e.Partitions)
		}
	case *meta.UpdateTopicIf:
		p.grown(incarnation{e.Name, domain.TopicID(e.ID)}, e.Partitions)
	case *meta.DeleteTopic:
		p.deleted(incarnation{topic: e.Name})
		return true
	case *meta.DeleteTopicIf:
		p.deleted(incarnation{e.Name, domain.TopicID(e.ID)})
		return true
	}
	return false
}

func (p *Purger) created(name string, id domain.TopicID, partitions int32) {
	p.names[name] = id
	p.grown(incarnation{name, id}, partitions)
}

func (p *Purger) grown(inc incarnation, partitions int32) {
	p.sizes[inc] = max(p.sizes[inc], partitions)
}

func (p *Purger) deleted(inc incarnation) {
	p.pending[inc] = true
	if id, ok := p.names[inc.topic]; ok && (inc.id == "" || inc.id == id) {
		delete(p.names, inc.topic)
	}
}

// reseed reads every live topic from the replica. An incarnation noted live
// that the replica no longer holds was deleted unseen: it becomes pending.
func (p *Purger) reseed() error {
	topics, err := p.store.ListTopics("", 0)
	if err != nil {
		return fmt.Errorf("orphans: purge: list topics: %w", err)
	}
	names := make(map[string]domain.TopicID, len(topics))
	for _, t := range topics {
		id := domain.TopicID(t.ID)
		names[t.Name] = id
		p.grown(incarnation{t.Name, id}, t.Partitions)
	}
	for name, id := range p.names {
		if cur, ok := names[name]; !ok || cur != id {
			p.pending[incarnation{name, id}] = true
		}
	}
	p.names = names
	return nil
}
