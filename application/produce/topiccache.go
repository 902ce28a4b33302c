package produce

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// topicCache holds each topic's view and current schema as read at some
// applied index of the replica. An entry is used only while the replica has
// applied nothing since: any entry may have changed the topic or its
// schema, and the metastore publishes the applied index only after the
// views it covers, before a proposer is answered. So a produce never sees
// an older view than a fresh read would, and a hot topic costs no decode.
// Absent topics are not cached. Safe for concurrent use.
type topicCache struct {
	mu      sync.RWMutex
	byTopic map[string]topicEntry
}

type topicEntry struct {
	index  uint64
	topic  meta.Topic
	latest *meta.SchemaVersion // nil: the topic has no schema; shared, read-only
}

func newTopicCache() *topicCache { return &topicCache{byTopic: map[string]topicEntry{}} }

// get returns the topic named name and its current schema version (nil
// when none); ok=false when the replica has no such topic.
func (c *topicCache) get(r TopicReader, name string) (topicEntry, bool, error) {
	index := r.AppliedIndex() // read before the views: a later apply re-reads
	c.mu.RLock()
	e, ok := c.byTopic[name]
	c.mu.RUnlock()
	if ok && e.index == index {
		return e, true, nil
	}
	t, ok, err := r.Topic(name)
	if err != nil || !ok {
		return topicEntry{}, ok, err
	}
	history, err := r.Schemas(name)
	if err != nil {
		return topicEntry{}, false, fmt.Errorf("read schemas: %w", err)
	}
	e = topicEntry{index: index, topic: t}
	if n := len(history); n > 0 {
		latest := history[n-1]
		e.latest = &latest
	}
	c.mu.Lock()
	if len(c.byTopic) >= topicCacheMaxCount {
		clear(c.byTopic)
	}
	c.byTopic[name] = e
	c.mu.Unlock()
	return e, true, nil
}

// schemaKey names a compiled schema for the validator's cache:
// "<topic id>/<version>" (the name stands in for a legacy topic's id).
func schemaKey(t meta.Topic, version int32) string {
	id := t.ID
	if id == "" {
		id = t.Name
	}
	return id + "/" + strconv.Itoa(int(version))
}

// errReplica wraps a replica read failure: the produce may be retried.
func errReplica(name string, err error) error {
	return fmt.Errorf("produce: read topic %q: %w: %w", name, domain.ErrUnavailable, err)
}
