package fake

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.PeerFrontiers = (*PeerFrontiers)(nil)

// PeerFrontiersCall is one Unconsumed a PeerFrontiers saw. Deadline is the
// call's context deadline (zero without one).
type PeerFrontiersCall struct {
	Node, Topic string
	ID          domain.TopicID
	Parts       []int32
	Deadline    time.Time
}

// PeerFrontiers is an in-memory ports.PeerFrontiers. Each node answers the
// first unconsumed offsets Set for it, for the incarnation they were set
// under: a partition with nothing set is another node's
// (domain.ErrNotOwner), a request naming another incarnation is
// domain.ErrTopicNotFound. Fail makes a node's calls fail; Block holds
// every later call until released or until its context ends. It records
// every call and the most calls in flight at once. Safe for concurrent use.
type PeerFrontiers struct {
	callLog[PeerFrontiersCall]
	mu      sync.Mutex
	offsets map[peerPart]peerFrontier
}

type peerFrontier struct {
	id         domain.TopicID
	unconsumed int64
}

// NewPeerFrontiers returns a PeerFrontiers whose nodes own nothing.
func NewPeerFrontiers() *PeerFrontiers {
	return &PeerFrontiers{offsets: map[peerPart]peerFrontier{}}
}

// Set makes node answer unconsumed (the first offset its consumers have not
// settled) for ref (its topic, incarnation and partition).
func (f *PeerFrontiers) Set(node string, ref domain.PartitionRef, unconsumed int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.offsets[peerPart{node, ref.Topic, ref.Partition}] = peerFrontier{ref.TopicID, unconsumed}
}

// Unconsumed answers node's offsets for parts, in order.
func (f *PeerFrontiers) Unconsumed(ctx context.Context, node, topic string, id domain.TopicID, parts []int32) ([]int64, error) {
	deadline, _ := ctx.Deadline()
	err := f.enter(ctx, node, PeerFrontiersCall{Node: node, Topic: topic, ID: id, Parts: append([]int32(nil), parts...), Deadline: deadline})
	defer f.leave()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]int64, len(parts))
	for i, p := range parts {
		got, ok := f.offsets[peerPart{node, topic, p}]
		switch {
		case !ok:
			return nil, fmt.Errorf("fake peer frontiers: %s/%d not on %s: %w", topic, p, node, domain.ErrNotOwner)
		case id != "" && id != got.id:
			return nil, fmt.Errorf("fake peer frontiers: %s holds %s incarnation %q, not %q: %w", node, topic, got.id, id, domain.ErrTopicNotFound)
		}
		out[i] = got.unconsumed
	}
	return out, nil
}
