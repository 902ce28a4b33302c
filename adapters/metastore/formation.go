package metastore

import (
	"errors"
	"fmt"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/narad/narad/domain/meta"
)

// startPlan is how a replica enters its shard.
type startPlan struct {
	members map[uint64]string // initial members when bootstrapping
	join    bool
	kind    string // restart | bootstrap-single | bootstrap-peers | join
}

// HasMetadataState reports whether this host holds Raft state for the
// metadata shard: a restart, whatever the configuration says. Without it
// OpenMetadata bootstraps or joins (planStart), and bootstrap/probe.go asks
// the peers first which of the two an initial member should do (§9.2).
func (h *Host) HasMetadataState() bool {
	return h.nh.HasNodeInfo(metadataShardID, meta.ReplicaID(h.cfg.NodeID))
}

// planStart decides cluster formation before Raft starts:
//   - Raft state on disk: restart from it, whatever the config says;
//   - Join set, or an initial member list without this node: join-only (the
//     leader must add the replica; see application/membership);
//   - no member list: bootstrap a one-member cluster;
//   - a member list naming this node: bootstrap with those peers.
func (h *Host) planStart(shardID uint64, cfg StoreConfig) (startPlan, error) {
	self := meta.ReplicaID(h.cfg.NodeID)
	if h.nh.HasNodeInfo(shardID, self) {
		return startPlan{kind: "restart"}, nil
	}
	if cfg.Join {
		return startPlan{join: true, kind: "join"}, nil
	}
	if len(cfg.InitialMembers) == 0 {
		return startPlan{members: map[uint64]string{self: h.cfg.RaftAddr}, kind: "bootstrap-single"}, nil
	}
	members := make(map[uint64]string, len(cfg.InitialMembers))
	for id, addr := range cfg.InitialMembers {
		rid := meta.ReplicaID(id)
		if _, dup := members[rid]; dup {
			return startPlan{}, fmt.Errorf("initial member %q collides with another id's replica id %d: %w", id, rid, ErrBadConfig)
		}
		members[rid] = addr
	}
	addr, listed := cfg.InitialMembers[h.cfg.NodeID]
	if !listed {
		return startPlan{join: true, kind: "join"}, nil
	}
	if addr != h.cfg.RaftAddr {
		return startPlan{}, fmt.Errorf("initial members give %q the address %q, the host listens on %q: %w", h.cfg.NodeID, addr, h.cfg.RaftAddr, ErrBadConfig)
	}
	return startPlan{members: members, kind: "bootstrap-peers"}, nil
}

// guardOrphanState checks the state machine directory before Raft starts.
// A restarting replica must not hold a database from a newer release
// (ErrNewerDatabase: refused here, cleanly, rather than by the state
// machine's Open inside Raft). A directory left without Raft state (Raft
// data lost or wiped, or a volume restored in part) holds entries a new log
// would skip, so: a joiner sets it aside as <dir>.stale-<unix ns> and
// rebuilds from the leader; a bootstrapping node refuses to start.
func (h *Host) guardOrphanState(files *dbFiles, plan startPlan) error {
	m, err := files.onDisk()
	switch {
	case plan.kind == "restart":
		return err
	case err != nil && !(plan.join && errors.Is(err, ErrNewerDatabase)):
		return err
	case m.applied == 0:
		return nil
	case !plan.join:
		return fmt.Errorf("%s applied entries through %d; refusing to %s: %w", files.dir, m.applied, plan.kind, ErrStaleState)
	}
	aside := fmt.Sprintf("%s.stale-%d", files.dir, time.Now().UnixNano())
	if err := os.Rename(files.dir, aside); err != nil {
		return fmt.Errorf("metastore: set aside %s: %w", files.dir, err)
	}
	h.log.Warn("metadata state without Raft state set aside; rebuilding from the leader",
		zap.String("aside", aside), zap.Uint64("applied_index", m.applied))
	return nil
}
