package consume

import (
	"fmt"
	"slices"
	"sync"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/lease"
	"github.com/narad/narad/ports"
)

// shard is one local partition's in-flight state. Every field below ready
// is guarded by mu, and l only after ready is closed.
type shard struct {
	ref   domain.PartitionRef
	ready chan struct{} // closed once created (or its creation failed)
	err   error         // creation failure; set before ready closes

	mu    sync.Mutex
	l     *lease.Shard
	dirty bool // changed since the committer last took a snapshot
	gone  bool // dropped by Forget: serve nothing, persist nothing

	recv receives // receive counts, for a topic with a dead-letter policy
}

// snapshot is the shard's persistable progress; call with mu held.
func (sh *shard) snapshot() ports.ConsumerOffsets {
	ahead := sh.l.AckedAhead()
	slices.Sort(ahead)
	return ports.ConsumerOffsets{Committed: sh.l.Committed(), AckedAhead: ahead}
}

// shardTable holds the shards of every local partition touched since start,
// keyed by incarnation so a recreated topic never shares one.
type shardTable struct {
	mu sync.Mutex
	m  map[domain.PartitionRef]*shard
}

// shard returns ref's shard, creating it at first touch from the persisted
// frontier. Concurrent first touches share one creation.
func (s *Service) shard(ref domain.PartitionRef, caps lease.Caps) (*shard, error) {
	s.shards.mu.Lock()
	sh, ok := s.shards.m[ref]
	if !ok {
		sh = &shard{ref: ref, ready: make(chan struct{})}
		s.shards.m[ref] = sh
	}
	s.shards.mu.Unlock()
	if !ok {
		s.create(sh, caps)
	}
	<-sh.ready
	if sh.err != nil {
		return nil, sh.err
	}
	return sh, nil
}

// create loads the persisted progress (the larger frontier of the two files
// wins) and starts the nonce stream from fresh random bytes. A failed
// creation is forgotten, so the next touch tries again.
func (s *Service) create(sh *shard, caps lease.Caps) {
	defer close(sh.ready)
	o, err := s.committer.store.Load(sh.ref)
	if err != nil {
		sh.err = fmt.Errorf("consume: load the frontier of %s: %w", sh.ref, err)
	}
	seed, serr := s.seed()
	if sh.err == nil && serr != nil {
		sh.err = serr
	}
	if sh.err != nil {
		s.shards.mu.Lock()
		if s.shards.m[sh.ref] == sh {
			delete(s.shards.m, sh.ref)
		}
		s.shards.mu.Unlock()
		return
	}
	sh.l = lease.NewShard(o.Committed, o.AckedAhead, caps, seed)
	sh.recv.durable.Store(o.Committed)
}

// existing returns ref's shard without creating it (nil when absent): an
// ack needs a lease, and a partition without a shard holds none.
func (s *Service) existing(ref domain.PartitionRef) *shard {
	s.shards.mu.Lock()
	sh := s.shards.m[ref]
	s.shards.mu.Unlock()
	if sh == nil {
		return nil
	}
	<-sh.ready
	if sh.err != nil {
		return nil
	}
	return sh
}

// all lists every live shard.
func (t *shardTable) all() []*shard {
	t.mu.Lock()
	out := make([]*shard, 0, len(t.m))
	for _, sh := range t.m {
		out = append(out, sh)
	}
	t.mu.Unlock()
	live := out[:0]
	for _, sh := range out {
		<-sh.ready
		if sh.err == nil {
			live = append(live, sh)
		}
	}
	return live
}

// drop removes and marks gone every shard of a topic incarnation. It waits
// for creations already reading the partition's files (the create fence):
// a creation that read a replaced directory is dropped with the rest.
// dropRef removes ref's shard, if any, marking it gone.
func (t *shardTable) dropRef(ref domain.PartitionRef) *shard {
	t.mu.Lock()
	sh, ok := t.m[ref]
	delete(t.m, ref)
	t.mu.Unlock()
	if !ok {
		return nil
	}
	<-sh.ready
	sh.mu.Lock()
	sh.gone = true
	sh.mu.Unlock()
	return sh
}

func (t *shardTable) drop(topic string, id domain.TopicID) []*shard {
	t.mu.Lock()
	var out []*shard
	for ref, sh := range t.m {
		if ref.Topic == topic && ref.TopicID == id {
			out = append(out, sh)
			delete(t.m, ref)
		}
	}
	t.mu.Unlock()
	for _, sh := range out {
		<-sh.ready
		sh.mu.Lock()
		sh.gone = true
		sh.mu.Unlock()
	}
	return out
}
