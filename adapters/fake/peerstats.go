package fake

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.PeerStats = (*PeerStats)(nil)

// PeerStatsCall is one PartitionStats a PeerStats saw. Deadline is the
// call's context deadline (zero without one).
type PeerStatsCall struct {
	Node, Topic string
	ID          domain.TopicID
	Parts       []int32
	Deadline    time.Time
}

// PeerStats is an in-memory ports.PeerStats. Each node answers the stats
// Set for it, for the incarnation they were set under: a partition with
// nothing set is another node's (domain.ErrNotOwner), a request naming
// another incarnation is domain.ErrTopicNotFound. Fail makes a node's
// calls fail; Block holds every later call until released or until its
// context ends. It records every call and the most calls in flight at
// once. Safe for concurrent use.
type PeerStats struct {
	callLog[PeerStatsCall]
	mu    sync.Mutex
	stats map[peerPart]peerStat
}

type peerPart struct {
	node, topic string
	partition   int32
}

type peerStat struct {
	id domain.TopicID
	st ports.LogStats
}

// NewPeerStats returns a PeerStats whose nodes own nothing.
func NewPeerStats() *PeerStats {
	return &PeerStats{stats: map[peerPart]peerStat{}}
}

// Set makes node answer st for ref (its topic, incarnation and partition).
func (f *PeerStats) Set(node string, ref domain.PartitionRef, st ports.LogStats) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stats[peerPart{node, ref.Topic, ref.Partition}] = peerStat{ref.TopicID, st}
}

// PartitionStats answers node's stats for parts, in order.
func (f *PeerStats) PartitionStats(ctx context.Context, node, topic string, id domain.TopicID, parts []int32) ([]ports.LogStats, error) {
	deadline, _ := ctx.Deadline()
	err := f.enter(ctx, node, PeerStatsCall{Node: node, Topic: topic, ID: id, Parts: append([]int32(nil), parts...), Deadline: deadline})
	defer f.leave()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]ports.LogStats, len(parts))
	for i, p := range parts {
		got, ok := f.stats[peerPart{node, topic, p}]
		switch {
		case !ok:
			return nil, fmt.Errorf("fake peer stats: %s/%d not on %s: %w", topic, p, node, domain.ErrNotOwner)
		case id != "" && id != got.id:
			return nil, fmt.Errorf("fake peer stats: %s holds %s incarnation %q, not %q: %w", node, topic, got.id, id, domain.ErrTopicNotFound)
		}
		out[i] = got.st
	}
	return out, nil
}
