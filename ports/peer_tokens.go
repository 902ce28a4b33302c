package ports

import (
	"context"
	"time"

	"github.com/narad/narad/domain"
)

// TokenRegistration asks a partition owner to call back once when records
// of Topic can be handed out (a delivery token, internals.md §5.5).
type TokenRegistration struct {
	Topic string
	// TTL is how long the token lives: a duration, never a deadline, so
	// each side measures it on its own clock.
	TTL time.Duration
}

// TokenPeers carries delivery tokens between nodes (node RPC ops 30
// TokenRegister, 31 TokenNotify and 41 TokenPush). Safe for concurrent
// use. Errors fall in the classes of PeerForwarder; a node that predates
// the operations answers domain.ErrNotImplemented.
type TokenPeers interface {
	// RegisterTokens leaves one token per registration with owner, on
	// behalf of node from (the member id the owner calls back); each
	// replaces from's earlier token for the same topic.
	RegisterTokens(ctx context.Context, owner, from string, regs []TokenRegistration) error
	// NotifyToken tells node, which left a token for topic with from, that
	// from has a record of topic for it. claimed is false when node passes
	// (no consumer of its own can use the record).
	NotifyToken(ctx context.Context, node, from, topic string) (claimed bool, err error)
	// PushToken spends node's token of topic at from by handing it ds, the
	// record(s) from reserved for it: taken is false when node passes (no
	// consumer of its own can use them), and from then releases them. A
	// node that took them and still has consumers parked on topic asks
	// for its token again: again > 0 is that token's TTL.
	PushToken(ctx context.Context, node, from, topic string, ds []domain.Delivery) (taken bool, again time.Duration, err error)
	// ProbeLeavingToken is PeerForwarder.ConsumeRemote of a probe (req
	// LocalOnly, no wait) that carries a registration of req.Topic for
	// node from lasting ttl: an owner that finds nothing to hand out keeps
	// the token, as RegisterTokens would have, in the probe's one round
	// trip. left reports that it did: an empty answer from an owner that
	// read the token. An owner that cannot read one (an older release) is
	// probed without it, left false, and not offered one again for a while.
	ProbeLeavingToken(ctx context.Context, owner, from string, req RemoteConsume, ttl time.Duration) (ds []domain.Delivery, left bool, err error)
}
