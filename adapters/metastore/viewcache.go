package metastore

import (
	"slices"
	"sync"

	"github.com/narad/narad/domain/meta"
)

// viewCache keeps decoded topic, assignment and member views for the hot
// paths (every produce, consume, ack and remote commit reads them) until the replica applies
// another entry: each lookup compares the applied index it loaded before
// reading with the cache's, and a change drops everything. A value read at
// index i is stored only while the cache still describes i, so nothing older
// than the index a caller observed is ever served.
type viewCache struct {
	mu          sync.Mutex
	index       uint64
	topics      map[string]cachedTopic
	assignments map[assignKey]cachedAssignment
	// topicRows are whole topics' assignment lists (every consume lists
	// its topic's partitions to find the local ones).
	topicRows map[string][]meta.Assignment
	members   []meta.Member // nil: not cached at this index
}

type assignKey struct {
	topic     string
	partition int32
}

type cachedTopic struct {
	t  meta.Topic
	ok bool
}

type cachedAssignment struct {
	a  meta.Assignment
	ok bool
}

// at aligns the cache with index, dropping everything of another index.
func (c *viewCache) at(index uint64) {
	if c.index != index || c.topics == nil {
		c.index = index
		c.topics = map[string]cachedTopic{}
		c.assignments = map[assignKey]cachedAssignment{}
		c.topicRows = map[string][]meta.Assignment{}
		c.members = nil
	}
}

// memberTable returns a copy of the cached member table, if any.
func (c *viewCache) memberTable(index uint64) ([]meta.Member, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at(index)
	if c.members == nil {
		return nil, false
	}
	return slices.Clone(c.members), true
}

func (c *viewCache) putMembers(index uint64, ms []meta.Member) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index == index && c.topics != nil {
		c.members = append(make([]meta.Member, 0, len(ms)), ms...)
	}
}

func (c *viewCache) topic(index uint64, name string) (cachedTopic, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at(index)
	v, ok := c.topics[name]
	if ok {
		v.t = cloneTopic(v.t)
	}
	return v, ok
}

func (c *viewCache) putTopic(index uint64, name string, v cachedTopic) {
	if v.t.Remote != nil {
		return // a remote stub's link is not copied cheaply; read it fresh
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index == index && c.topics != nil {
		v.t = cloneTopic(v.t)
		c.topics[name] = v
	}
}

func (c *viewCache) assignment(index uint64, k assignKey) (cachedAssignment, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at(index)
	v, ok := c.assignments[k]
	return v, ok
}

func (c *viewCache) putAssignment(index uint64, k assignKey, v cachedAssignment) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index == index && c.assignments != nil {
		c.assignments[k] = v
	}
}

// topicAssignments returns a copy of topic's cached assignment list, if any.
func (c *viewCache) topicAssignments(index uint64, topic string) ([]meta.Assignment, bool) {
	rows, ok := c.sharedTopicAssignments(index, topic)
	if !ok {
		return nil, false
	}
	return slices.Clone(rows), true
}

// sharedTopicAssignments is topicAssignments without the copy: the caller
// only reads the list, which the cache never changes in place.
func (c *viewCache) sharedTopicAssignments(index uint64, topic string) ([]meta.Assignment, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at(index)
	rows, ok := c.topicRows[topic]
	return rows, ok
}

func (c *viewCache) putTopicAssignments(index uint64, topic string, rows []meta.Assignment) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index == index && c.topicRows != nil {
		c.topicRows[topic] = slices.Clone(rows)
	}
}

// cloneTopic copies the slices so callers own what they get.
func cloneTopic(t meta.Topic) meta.Topic {
	t.Children = slices.Clone(t.Children)
	t.AttachOffsets = slices.Clone(t.AttachOffsets)
	return t
}
