package bootstrap

import (
	"context"
	"crypto/rand"
	"fmt"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/quicpeer"
	"github.com/narad/narad/adapters/segmentlog"
	"github.com/narad/narad/adapters/telemetry"
	"github.com/narad/narad/adapters/wal"
	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/application/fanout"
	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/application/moves"
	"github.com/narad/narad/application/partitionstats"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/bootstrap/config"
	"github.com/narad/narad/ports"
)

// clusterSecretGeneratedBytes sizes the secret a node without one makes for
// the life of its process (api.md §6.1: only a node without peers may).
const clusterSecretGeneratedBytes = 32

// clusterModule is the node-to-node plane: the QUIC server (on the client
// API's port number, over UDP) answering commits, consumes, acks,
// partition statistics and fan-out cursor lag for the partitions this node
// owns, and the client that carries this node's dispatch, forwards,
// describes and children listings to other owners (every call counted in
// the node RPC metrics).
var clusterModule = fx.Module("cluster",
	fx.Provide(
		newClusterSecret,
		newPeerClient,
		newPeers,
		newPartitionStats,
		fx.Annotate(func(p *quicpeer.Peers) ports.PeerCommitter { return p }),
		func(p *quicpeer.Peers) ports.PeerStatus { return p },
		// `from: unconsumed` attaches read each parent partition's consumer
		// frontier on its owner: here, or over op 38.
		func(s *consume.Service) ports.ConsumerFrontiers { return s },
		func(p *quicpeer.Peers) ports.PeerFrontiers { return p },
		newStatusReporter,
	),
	fx.Invoke(servePeers),
)

// ClusterSecret authenticates node-to-node streams.
type ClusterSecret []byte

func newClusterSecret(cfg config.Config, log *zap.Logger) (ClusterSecret, error) {
	if s := cfg.Secrets.ClusterSecret; s != "" {
		return ClusterSecret(s), nil
	}
	if len(cfg.Cluster.Peers) > 0 {
		return nil, fmt.Errorf("NARAD_CLUSTER_SECRET is required to run with cluster.peers: nodes authenticate each other with it")
	}
	b := make([]byte, clusterSecretGeneratedBytes)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	log.Info("no cluster secret set: generated one for the life of this single-node process")
	return ClusterSecret(b), nil
}

func newPeerClient(lc fx.Lifecycle, secret ClusterSecret, log *zap.Logger) (*quicpeer.Client, error) {
	c, err := quicpeer.NewClient(quicpeer.ClientOptions{Secret: secret, Log: log.With(zap.String("component", "peers"))})
	if err != nil {
		return nil, err
	}
	lc.Append(fx.StopHook(c.Close))
	return c, nil
}

func newPeers(c *quicpeer.Client, store ports.MetadataStore, m *telemetry.Metrics) *quicpeer.Peers {
	return quicpeer.NewPeers(c, memberResolver{store}, quicpeer.WithObserver(m.ClusterRPC()))
}

// newPartitionStats is the owner side of op 8: this node's partitions'
// statistics, for describes and attaches running elsewhere.
func newPartitionStats(store ports.MetadataStore, logs ports.PartitionLogs, id NodeIdentity) *partitionstats.Reader {
	return partitionstats.New(store, logs, id.ID)
}

// memberResolver finds a member's node-RPC address in the member table: its
// client address, whose port number QUIC shares over UDP.
type memberResolver struct{ store ports.MetadataCluster }

func (r memberResolver) Addr(node string) (string, bool) {
	members, err := r.store.Members()
	if err != nil {
		return "", false
	}
	for _, m := range members {
		if m.ID == node && m.Addr != "" {
			return m.Addr, true
		}
	}
	return "", false
}

// sourceSide is a move's source: the store's listing and chunk reads, the
// handoff's freeze.
type sourceSide struct {
	ports.PartitionTransfer
	ports.PartitionFreezer
}

// newStatusReporter answers NodeStatus (op 33) for this node.
func newStatusReporter(w *wal.WAL, logs *segmentlog.Store, svc *produce.Service, drain *membership.SelfDrain, runner *moves.Runner,
	id NodeIdentity) *membership.StatusReporter {
	return membership.NewStatusReporter(membership.StatusDeps{Self: id.ID, Drain: drain, InFlight: svc.InFlight, Dirs: logs, Moves: runner.Reports,
		Backlog: func() uint64 { return w.DurableNext() - w.Checkpoint() }})
}

func servePeers(lc fx.Lifecycle, cfg config.Config, secret ClusterSecret, committer *produce.Committer, svc *consume.Service,
	stats *partitionstats.Reader, lag *fanout.LagReader, desk *membership.Desk, status *membership.StatusReporter,
	logs *segmentlog.Store, links *localLinks, rem *remotes.Service, scanner *produce.BacklogScanner, clock ports.Clock, log *zap.Logger) error {
	srv, err := quicpeer.NewServer(quicpeer.ServerOptions{Secret: secret, Log: log.With(zap.String("component", "peers"))})
	if err != nil {
		return err
	}
	quicpeer.RegisterCommit(srv, committer)
	quicpeer.RegisterConsume(srv, svc.Owner()) // the owner view never forwards again
	quicpeer.RegisterSettle(srv, svc.Owner())
	quicpeer.RegisterPartitionStats(srv, stats)
	quicpeer.RegisterConsumerFrontiers(srv, svc) // op 38: this node's partitions only
	quicpeer.RegisterFanoutCursors(srv, lag)
	quicpeer.RegisterJoin(srv, desk)
	quicpeer.RegisterNodeStatus(srv, status)
	quicpeer.RegisterRemoteWrite(srv, rem)                               // op 35
	quicpeer.RegisterRemoteCheck(srv, remoteMember{links, rem, scanner}) // op 36
	// A move's source side (ops 22-24); a freeze waits for the partition's
	// leases to settle before its capture.
	quicpeer.RegisterTransfer(srv, sourceSide{logs, &moves.Handoff{Freezer: logs, Leases: svc, Clock: clock}}, moves.FreezeTTL)
	quicpeer.RegisterTokens(srv, svc) // delivery tokens, both sides (internals.md §5.5)
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			if err := srv.Listen(cfg.HTTP.Addr); err != nil {
				return fmt.Errorf("listen for node RPC (udp) on %s: %w", cfg.HTTP.Addr, err)
			}
			log.Info("node RPC listening", zap.String("addr", srv.Addr().String()))
			return nil
		},
		OnStop: func(context.Context) error { return srv.Close() },
	})
	return nil
}
