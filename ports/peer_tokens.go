package ports

import (
	"context"
	"time"
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
// TokenRegister and 31 TokenNotify). Safe for concurrent use. Errors fall
// in the classes of PeerForwarder; a node that predates the operations
// answers domain.ErrNotImplemented.
type TokenPeers interface {
	// RegisterTokens leaves one token per registration with owner, on
	// behalf of node from (the member id the owner calls back); each
	// replaces from's earlier token for the same topic.
	RegisterTokens(ctx context.Context, owner, from string, regs []TokenRegistration) error
	// NotifyToken tells node, which left a token for topic with from, that
	// from has a record of topic for it. claimed is false when node passes
	// (no consumer of its own can use the record).
	NotifyToken(ctx context.Context, node, from, topic string) (claimed bool, err error)
}
