package bootstrap

import (
	"context"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/httpapi"
	"github.com/narad/narad/adapters/metastore"
	"github.com/narad/narad/adapters/quicpeer"
	"github.com/narad/narad/adapters/telemetry"
	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/application/moves"
	"github.com/narad/narad/bootstrap/config"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// joinMaxVoters is the voter target a leader promotes staged nodes up to:
// a cluster grown past it keeps the extra nodes as non-voters.
const joinMaxVoters = membership.LargeMaxVoters

// joinModule is cluster growth (internals.md §9.2-§9.3): the desk that
// answers JoinCluster (op 21, registered with the node RPC server), this
// node's join loop (a join-only node asks to be admitted at once; any node
// that sees no leader for 15 s asks again), the members listing and the
// cluster's admin writes (decommission, forget, a move's abort).
var joinModule = fx.Module("join",
	fx.Provide(
		newJoinDesk,
		func(s *metastore.Store) Admission { return s },
		func(s *metastore.Store, c ports.Clock, id NodeIdentity, local *membership.StatusReporter, peers ports.PeerStatus) httpapi.MemberLister {
			return membership.NewRoster(s, c).WithStatus(membership.StatusSources{Self: id.ID, Local: local, Peers: peers})
		},
		func(s ports.MetadataStore) httpapi.ClusterReader { return s },
		asRoutes(httpapi.ClusterRoutes),
		func(s *metastore.Store, c ports.Clock) httpapi.Decommissioner {
			return membership.NewDecommissioner(s, c)
		},
		func(s *metastore.Store, c ports.Clock) httpapi.Forgetter { return membership.NewForgetter(s, c) },
		func(s *metastore.Store, c ports.Clock) httpapi.MoveAborter { return moves.NewAborter(s, c) },
		asRoutes(httpapi.ClusterAdminRoutes),
	),
	fx.Invoke(runJoiner, registerDecommissionBlocked),
)

// decommissionGaugeTimeout bounds the Raft configuration read of one
// scrape of narad_decommission_blocked.
const decommissionGaugeTimeout = 2 * time.Second

// registerDecommissionBlocked exports narad_decommission_blocked on the
// leader: what keeps each draining member in the cluster, read from the
// leader's replica and Raft configuration (the reasons that need a
// member's own status are in members ?detail=true).
func registerDecommissionBlocked(m *telemetry.Metrics, s *metastore.Store, c ports.Clock) {
	roster := membership.NewRoster(s, c)
	m.DecommissionBlockedGauge(func() []telemetry.DecommissionBlock {
		if !s.IsLeader() || !anyDraining(s) {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), decommissionGaugeTimeout)
		defer cancel()
		views, err := roster.List(ctx)
		if err != nil {
			return nil
		}
		var out []telemetry.DecommissionBlock
		for _, v := range views {
			for _, r := range v.DecommissionBlocked {
				out = append(out, telemetry.DecommissionBlock{Node: v.ID, Reason: r.Code})
			}
		}
		return out
	})
}

// anyDraining reports whether a member is draining (the gauge's cheap
// first look).
func anyDraining(s *metastore.Store) bool {
	members, err := s.Members()
	if err != nil {
		return false
	}
	for _, mb := range members {
		if mb.Draining {
			return true
		}
	}
	return false
}

// Admission says whether this node belongs to a Raft configuration yet
// (false only while a join-only node waits to be added).
type Admission interface{ Admitted() bool }

func newJoinDesk(s *metastore.Store, c ports.Clock, log *zap.Logger) *membership.Desk {
	l := newSlog(log.With(zap.String("component", "join")))
	return membership.NewDesk(s, membership.NewAdmitter(s, joinMaxVoters, membership.WithClock(c), membership.WithLogger(l)))
}

func runJoiner(lc fx.Lifecycle, cfg config.Config, id NodeIdentity, s *metastore.Store, c *quicpeer.Client, clock ports.Clock, log *zap.Logger) error {
	if len(cfg.Cluster.Peers) == 0 {
		return nil // a single node has nobody to join
	}
	peers, err := probeAddrs(cfg, id) // the same addresses as the empty-volume probe
	if err != nil {
		return err
	}
	j := membership.NewJoiner(membership.JoinerConfig{
		Sender: quicpeer.NewJoinClient(c), View: s, Clock: clock,
		Log:     newSlog(log.With(zap.String("component", "join"))),
		Request: joinRequest(id, s.JoinOnly()),
		Peers:   peers,
	})
	if s.JoinOnly() {
		log.Info("join-only node: asking the cluster to admit it", zap.Strings("peers", peers))
	}
	runWorker(lc, func(ctx context.Context) { j.Supervise(ctx, s.JoinOnly()) })
	return nil
}

// joinRequest is this node's JoinCluster request; empty says it starts
// from an empty data directory (a join-only start, §9.5).
func joinRequest(id NodeIdentity, empty bool) ports.JoinRequest {
	return ports.JoinRequest{NodeID: id.ID, RaftAddr: id.RaftAddr, DataDirEmpty: empty, EntryTypes: meta.AppliesThroughType}
}
