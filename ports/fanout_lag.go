package ports

import (
	"context"

	"github.com/narad/narad/domain"
)

// ChildEpoch names one child's current attachment to its parent: a cursor
// position counts for the child only when it was written under this epoch
// (internals.md §6.3).
type ChildEpoch struct {
	Child string
	Epoch string
}

// CursorLag is where one fan-out cursor stands on one parent partition, as
// the node owning that partition reads it (api.md §2.11, internals.md §6.6).
// Reported is false when that node has no position of the child's epoch
// for the partition: it does not own the partition (any more), no cursor of
// that epoch runs there and no cursor file holds that epoch, the cursor has
// not anchored yet, or the partition's log cannot be peeked. The numbers of
// an entry not reported are zero.
type CursorLag struct {
	Reported bool
	// NextOffset is the next parent offset the cursor copies: the running
	// cursor's persisted (or anchored) position, else its file's.
	NextOffset int64
	// HighWatermark is the parent partition's committed high watermark
	// (a peek: no log is opened or stamped for it).
	HighWatermark int64
}

// PeerFanoutLag asks another node where the fan-out cursors of parent
// partitions it owns stand (node RPC op 17, FanoutCursors: internals.md
// §6.6, §10.3). Safe for concurrent use.
type PeerFanoutLag interface {
	// FanoutLag returns one entry per (partition, child) pair, partitions
	// outer and children inner: the entry of parts[i] and children[j] is at
	// i*len(children)+j. parentID is the parent's incarnation (empty: the
	// live one). Partitions node does not own come back not reported;
	// errors refuse the whole request: domain.ErrTopicNotFound (node holds
	// no such incarnation), domain.ErrInvalidArgument (more pairs than one
	// call carries), domain.ErrUnavailable, ctx.Err(), or a transport
	// error.
	FanoutLag(ctx context.Context, node, parent string, parentID domain.TopicID, parts []int32, children []ChildEpoch) ([]CursorLag, error)
}
