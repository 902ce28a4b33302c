package topics

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/narad/narad/application/ctxwait"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// RetentionStore is what RetentionSync reads: topic views and the stream of
// applied entries.
type RetentionStore interface {
	ports.MetadataTopics
	ports.MetadataWatcher
}

// RetentionSync keeps the partition logs' retention equal to every topic's
// retention_ms on this node: all topics at start, then each applied create
// or alter, and all again after a snapshot install or a lagged watch.
type RetentionSync struct {
	store RetentionStore
	logs  ports.PartitionLogs
}

// NewRetentionSync returns the worker; it rejects nil dependencies.
func NewRetentionSync(store RetentionStore, logs ports.PartitionLogs) (*RetentionSync, error) {
	if store == nil || logs == nil {
		return nil, fmt.Errorf("retention sync: nil dependency: %w", ErrInvalidConfig)
	}
	return &RetentionSync{store: store, logs: logs}, nil
}

// Run works until ctx ends (nil) or the store stops (its error).
func (r *RetentionSync) Run(ctx context.Context) error {
	for {
		err := r.watchOnce(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, meta.ErrStopped):
			return err
		case err != nil:
			if !ctxwait.Sleep(ctx, retentionRetryDelay) {
				return nil
			}
		}
	}
}

// watchOnce subscribes, applies every topic's retention, then follows the
// subscription until it ends. A subscription that lagged or a failed read
// returns its error so Run starts over.
func (r *RetentionSync) watchOnce(ctx context.Context) error {
	sub, err := r.store.Watch(retentionWatchBuffer)
	if err != nil {
		return fmt.Errorf("retention sync: watch: %w", err)
	}
	defer sub.Close()
	if err := r.syncAll(); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case c, ok := <-sub.C():
			if !ok {
				if err := sub.Err(); err != nil {
					return err
				}
				return meta.ErrWatchLagged // closed without a reason: start over
			}
			if err := r.apply(c); err != nil {
				return err
			}
		}
	}
}

// apply follows one applied entry.
func (r *RetentionSync) apply(c ports.MetaChange) error {
	if c.Restored {
		return r.syncAll()
	}
	if !c.Result.OK() {
		return nil
	}
	var name string
	switch ev := c.Envelope.Event.(type) {
	case *meta.CreateTopic:
		name = ev.Name
	case *meta.CreateTopicWith:
		name = ev.Name
	case *meta.UpdateTopic:
		name = ev.Name
	case *meta.UpdateTopicIf:
		name = ev.Name
	default:
		return nil
	}
	t, ok, err := r.store.Topic(name)
	if err != nil {
		return fmt.Errorf("retention sync: read %q: %w", name, err)
	}
	if ok {
		r.set(t)
	}
	return nil
}

// syncAll applies every topic's retention.
func (r *RetentionSync) syncAll() error {
	all, err := r.store.ListTopics("", 0)
	if err != nil {
		return fmt.Errorf("retention sync: list topics: %w", err)
	}
	for _, t := range all {
		r.set(t)
	}
	return nil
}

func (r *RetentionSync) set(t meta.Topic) {
	r.logs.SetRetention(t.Name, domain.TopicID(t.ID), time.Duration(t.RetentionMs)*time.Millisecond)
}
