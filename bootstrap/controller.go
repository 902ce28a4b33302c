package bootstrap

import (
	"context"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/metastore"
	"github.com/narad/narad/adapters/quicpeer"
	"github.com/narad/narad/adapters/segmentlog"
	"github.com/narad/narad/adapters/telemetry"
	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/application/controller"
	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/application/moves"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/domain/rebalance"
	"github.com/narad/narad/ports"
)

// controllerModule runs the leader's duties (placement sweep, dead
// marking, removal of drained members, orphan pruning) and this node's
// heartbeats.
var controllerModule = fx.Module("controller",
	fx.Provide(newMoveRunner),
	fx.Invoke(runController, runHeartbeater, registerMovesBlocked, func(lc fx.Lifecycle, r *moves.Runner) { runWorker(lc, r.Run) }),
)

// newMoveRunner is this node's move runner: it copies in and flips the
// partitions the leader moves here (internals.md §11).
func newMoveRunner(s *metastore.Store, peers *quicpeer.Peers, logs *segmentlog.Store, c ports.Clock, id NodeIdentity,
	m *telemetry.Metrics, consumers *consume.Service, confirm *leaderconfirm.Confirmer, offsets ports.OffsetStore,
	cursors ports.FanoutCursors, log *zap.Logger) *moves.Runner {
	return moves.NewRunner(moves.RunnerDeps{Store: s, Peers: peers, Installer: logs, Clock: c, Self: id.ID, Metrics: m.Moves(), Consumers: consumers,
		Positions: moves.Positions{Offsets: offsets, Cursors: cursors},
		Sweep:     moves.SweepDeps{Copies: logs, Local: logs, Confirm: confirm},
		Log:       newSlog(log.With(zap.String("component", "moves")))})
}

// registerMovesBlocked exports narad_moves_blocked: the moves this node
// runs as destination that wait on a dead source, and, on the leader, the
// moves whose destination is dead (the rebalance pass aborts those after
// two minutes).
func registerMovesBlocked(m *telemetry.Metrics, r *moves.Runner, s ports.MetadataStore) {
	m.MovesBlockedGauge(func() map[string]int {
		counts := r.BlockedCounts()
		if s.IsLeader() {
			counts["target_dead"] = deadTargets(s)
		}
		return counts
	})
}

// deadTargets counts the moves in flight whose destination the replica
// holds dead.
func deadTargets(s ports.MetadataStore) int {
	members, err := s.Members()
	if err != nil {
		return 0
	}
	dead := map[string]bool{}
	for _, mb := range members {
		dead[mb.ID] = mb.Status == meta.StatusDead
	}
	mvs, err := s.Moves()
	if err != nil {
		return 0
	}
	n := 0
	for _, mv := range mvs {
		if dead[mv.To] {
			n++
		}
	}
	return n
}

func runController(lc fx.Lifecycle, s *metastore.Store, c ports.Clock, id NodeIdentity, m *telemetry.Metrics, place *PlacementLock,
	status ports.PeerStatus, log *zap.Logger) {
	ctl := controller.New(controller.Deps{Store: s, Clock: c, Self: id.ID, PlacementLock: place, Status: status, Transfer: s,
		MaxInFlightMoves: rebalance.MaxInFlightMovesDefault, Log: newSlog(log.With(zap.String("component", "controller")))})
	m.GaugeFunc("narad_dead_marking_refused", "1 while the leader refuses a dead verdict that would break voter quorum.", func() float64 {
		if ctl.DeadMarkingRefused() {
			return 1
		}
		return 0
	})
	runWorker(lc, func(ctx context.Context) {
		if err := ctl.Run(ctx); err != nil && ctx.Err() == nil {
			log.Error("controller stopped", zap.Error(err))
		}
	})
}

func runHeartbeater(lc fx.Lifecycle, s ports.MetadataStore, c ports.Clock, id NodeIdentity, log *zap.Logger) {
	hb := controller.NewHeartbeater(controller.HeartbeatConfig{
		Store: s, Clock: c, Log: newSlog(log.With(zap.String("component", "heartbeat"))),
		ID: id.ID, Addr: id.HTTPAddr, ClusterAddr: id.RaftAddr, Build: Build().Version, EntryTypes: meta.AppliesThroughType,
	})
	runWorker(lc, func(ctx context.Context) {
		if err := hb.Run(ctx); err != nil && ctx.Err() == nil {
			log.Error("heartbeats stopped", zap.Error(err))
		}
	})
}
