package fake

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.PeerFanoutLag = (*PeerFanoutLag)(nil)

// PeerFanoutLagCall is one FanoutLag a PeerFanoutLag saw. Deadline is the
// call's context deadline (zero without one).
type PeerFanoutLagCall struct {
	Node, Parent string
	ParentID     domain.TopicID
	Parts        []int32
	Children     []ports.ChildEpoch
	Deadline     time.Time
}

// PeerFanoutLag is an in-memory ports.PeerFanoutLag. Each node answers for
// the partitions Own gave it, with the cursor positions Cursor left there;
// like the real owner it leaves partitions it does not own and cursors of
// another epoch unreported, and refuses another incarnation with
// domain.ErrTopicNotFound. Fail makes a node's calls fail; Block holds
// every later call until released or until its context ends. On gives one
// node's view without the node argument (a node's local reader). Safe for
// concurrent use.
type PeerFanoutLag struct {
	callLog[PeerFanoutLagCall]
	mu      sync.Mutex
	owned   map[peerPart]ownedPart
	cursors map[lagCursor]ports.FanoutCursor
}

type ownedPart struct {
	id  domain.TopicID
	hwm int64
}

type lagCursor struct {
	part  peerPart
	child string
}

// NewPeerFanoutLag returns a PeerFanoutLag whose nodes own nothing.
func NewPeerFanoutLag() *PeerFanoutLag {
	return &PeerFanoutLag{owned: map[peerPart]ownedPart{}, cursors: map[lagCursor]ports.FanoutCursor{}}
}

// Own makes node the owner of ref (its topic, incarnation and partition),
// whose committed high watermark is hwm.
func (f *PeerFanoutLag) Own(node string, ref domain.PartitionRef, hwm int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.owned[peerPart{node, ref.Topic, ref.Partition}] = ownedPart{ref.TopicID, hwm}
}

// Cursor leaves child's cursor on node's partition ref at c.
func (f *PeerFanoutLag) Cursor(node string, ref domain.PartitionRef, child string, c ports.FanoutCursor) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cursors[lagCursor{peerPart{node, ref.Topic, ref.Partition}, child}] = c
}

// FanoutLag answers node's cursors in ports.PeerFanoutLag's order.
func (f *PeerFanoutLag) FanoutLag(ctx context.Context, node, parent string, parentID domain.TopicID, parts []int32, children []ports.ChildEpoch) ([]ports.CursorLag, error) {
	deadline, _ := ctx.Deadline()
	err := f.enter(ctx, node, PeerFanoutLagCall{Node: node, Parent: parent, ParentID: parentID, Deadline: deadline,
		Parts: append([]int32(nil), parts...), Children: append([]ports.ChildEpoch(nil), children...)})
	defer f.leave()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]ports.CursorLag, len(parts)*len(children))
	for i, p := range parts {
		pp := peerPart{node, parent, p}
		own, ok := f.owned[pp]
		switch {
		case !ok:
			continue
		case parentID != "" && parentID != own.id:
			return nil, fmt.Errorf("fake fanout lag: %s holds %s incarnation %q, not %q: %w", node, parent, own.id, parentID, domain.ErrTopicNotFound)
		}
		for j, c := range children {
			if cur, ok := f.cursors[lagCursor{pp, c.Child}]; ok && cur.Epoch == c.Epoch {
				out[i*len(children)+j] = ports.CursorLag{Reported: true, NextOffset: cur.NextOffset, HighWatermark: own.hwm}
			}
		}
	}
	return out, nil
}

// NodeFanoutLag is one node's view of a PeerFanoutLag: its own partitions'
// lag without naming the node.
type NodeFanoutLag struct {
	f    *PeerFanoutLag
	node string
}

// On returns node's view.
func (f *PeerFanoutLag) On(node string) NodeFanoutLag { return NodeFanoutLag{f: f, node: node} }

// FanoutLag is PeerFanoutLag.FanoutLag on the view's node.
func (n NodeFanoutLag) FanoutLag(ctx context.Context, parent string, parentID domain.TopicID, parts []int32, children []ports.ChildEpoch) ([]ports.CursorLag, error) {
	return n.f.FanoutLag(ctx, n.node, parent, parentID, parts, children)
}
