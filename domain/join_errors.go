package domain

import (
	"errors"
	"fmt"
)

// Cluster join refusals (internals.md §9.3, node RPC op 21 JoinCluster).
var (
	// ErrNotMetaLeader: the asked node is configured but does not lead the
	// metadata shard (421). A *NotLeaderError names the leader it knows.
	ErrNotMetaLeader = errors.New("domain: not the metastore leader")
	// ErrNoCluster: the asked node has no Raft configuration, so no
	// evidence of a cluster (412): it is itself waiting to be admitted.
	ErrNoCluster = errors.New("domain: no cluster configuration on this node")
	// ErrJoinTombstoned: the joining id was removed from the cluster for
	// good (a decommission); the join is refused (409).
	ErrJoinTombstoned = errors.New("domain: node id removed from the cluster")
	// ErrOlderRelease: the joiner applies fewer metadata entry types than
	// the cluster (internals.md §8.3 "Joining"); refused (409 code
	// older_release).
	ErrOlderRelease = errors.New("domain: joiner runs an older release than the cluster")
	// ErrClusterAuth: the asked node is a running Narad node-RPC endpoint
	// that refused this node's cluster secret (or this node refused its
	// proof): someone answers, but what it would say cannot be read.
	ErrClusterAuth = errors.New("domain: the peer and this node do not share the cluster secret")
)

// NotLeaderError is ErrNotMetaLeader with the leader the answering node
// knows: its id and node-RPC address, each empty when unknown.
type NotLeaderError struct {
	LeaderID   string
	LeaderAddr string
}

func (e *NotLeaderError) Error() string {
	if e.LeaderAddr == "" {
		return "domain: not the metastore leader (leader unknown)"
	}
	return fmt.Sprintf("domain: not the metastore leader; leader %s at %s", e.LeaderID, e.LeaderAddr)
}

// Unwrap makes errors.Is(err, ErrNotMetaLeader) hold.
func (e *NotLeaderError) Unwrap() error { return ErrNotMetaLeader }
