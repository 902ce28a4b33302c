package remotes

import (
	"context"
	"time"

	"github.com/narad/narad/application/pause"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// cacheWatchBuffer and cacheRewatchWait bound Follow's subscription.
const (
	cacheWatchBuffer = 64
	cacheRewatchWait = time.Second
)

// Follow drops the cache entries of deleted or recreated remotes as the
// metadata applies them (internals.md §7.6: a delete drops the entry and
// closes its idle connections), until ctx ends. It syncs once at start and
// after every snapshot install or lost subscription.
func (c *Cache) Follow(ctx context.Context, w ports.MetadataWatcher) {
	for ctx.Err() == nil {
		sub, err := w.Watch(cacheWatchBuffer)
		if err != nil {
			if !pause.For(ctx, cacheRewatchWait) {
				return
			}
			continue
		}
		c.syncFromStore()
		c.follow(ctx, sub)
		sub.Close()
	}
}

func (c *Cache) follow(ctx context.Context, sub ports.MetaSubscription) {
	for {
		select {
		case <-ctx.Done():
			return
		case ch, ok := <-sub.C():
			if !ok {
				return
			}
			if ch.Restored || ch.Envelope.Event != nil && meta.IsRemoteType(ch.Envelope.Event.Type()) {
				c.syncFromStore()
			}
		}
	}
}

func (c *Cache) syncFromStore() {
	if all, err := c.d.Store.Remotes(); err == nil {
		c.Sync(all)
	}
}
