package bootstrap

import (
	"context"
	"sync"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/httpapi"
	"github.com/narad/narad/adapters/metastore"
	"github.com/narad/narad/adapters/telemetry"
	"github.com/narad/narad/adapters/wal"
	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/bootstrap/config"
	"github.com/narad/narad/ports"
)

// produceModule accepts produces into the WAL and runs the dispatcher that
// carries them to their partition owners.
var produceModule = fx.Module("produce",
	fx.Provide(
		newProduceService,
		func(s *metastore.Store, id NodeIdentity) *membership.SelfDrain {
			return membership.NewSelfDrain(s, id.ID)
		},
		newCommitter,
		asRoutes(produceRoutes),
	),
	fx.Invoke(runDispatcher, runReleaser),
)

// produceRoutes builds the produce routes once per node with the
// configured limits (their counters live in the returned handlers).
func produceRoutes(cfg config.Config, svc *produce.Service, m *telemetry.Metrics, log *zap.Logger) []httpapi.Route {
	return httpapi.ProduceRoutesWith(svc, log, httpapi.ProduceLimits{
		MaxInFlightPerIdentity:    cfg.HTTP.MaxProduceInFlightPerIdentity,
		MaxBatchBodyBytesInFlight: cfg.HTTP.MaxBatchBodyBytesInFlight,
		BudgetRejected:            m.BatchBodyBudgetRejected,
	})
}

func newProduceService(s *metastore.Store, w ports.IngressWAL, v ports.SchemaValidator, c ports.Clock, m ports.Metrics,
	drain *membership.SelfDrain, owned *produce.Committer) *produce.Service {
	return produce.NewService(produce.ServiceDeps{Topics: s, WAL: w, Schemas: v, Clock: c, Metrics: m, Drain: drain, Owned: owned})
}

func newCommitter(s ports.MetadataStore, logs ports.PartitionLogs, sched ports.PartitionSchedule, l *leaderconfirm.Latch, c ports.Clock, m ports.Metrics, id NodeIdentity) *produce.Committer {
	return produce.NewCommitter(produce.CommitterDeps{Store: s, Logs: logs, Schedule: sched, Latch: l, Clock: c, Metrics: m, Self: id.ID})
}

// runReleaser moves scheduled records (per-message delays) of the
// partitions this node owns to their logs when due, and exports the
// scheduled backlog per partition.
func runReleaser(lc fx.Lifecycle, s ports.MetadataStore, sched ports.PartitionSchedule, l *leaderconfirm.Latch, c ports.Clock,
	m ports.Metrics, tm *telemetry.Metrics, id NodeIdentity, log *zap.Logger) {
	r := produce.NewReleaser(produce.ReleaserDeps{
		Store: s, Schedule: sched, Latch: l, Clock: c, Metrics: m, Self: id.ID,
		Logger: newSlog(log.With(zap.String("component", "releaser"))),
	})
	tm.ScheduleGauges(func() []ports.ScheduledPartition {
		list, err := sched.Scheduled()
		if err != nil {
			return nil
		}
		return list
	})
	runWorker(lc, r.Run)
}

// runDispatcher starts the dispatcher after the storage and metastore are
// up; at stop it drains what it can (the WAL keeps the rest) before the WAL
// and partition logs close.
func runDispatcher(lc fx.Lifecycle, w *wal.WAL, s ports.MetadataStore, l *leaderconfirm.Latch, conf *leaderconfirm.Confirmer,
	local *produce.Committer, peers ports.PeerCommitter, c ports.Clock, id NodeIdentity, tm *telemetry.Metrics, log *zap.Logger) {
	d := produce.NewDispatcher(produce.DispatcherDeps{
		WAL: w, Store: s, Latch: l, Confirmer: conf, Local: local, Peers: peers,
		Clock: c, Log: newSlog(log.With(zap.String("component", "dispatcher"))), Self: id.ID,
	})
	tm.GaugeFunc("narad_ingress_dispatch_busy_owners", "Owners this node's dispatcher judges short of CPU or disk: its commits to them wait for busy boundaries.", func() float64 {
		return float64(d.BusyOwners())
	})
	runWorker(lc, d.Run)
}

// runWorker runs fn on its own goroutine from start to stop.
func runWorker(lc fx.Lifecycle, fn func(context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			wg.Add(1)
			go func() { defer wg.Done(); fn(ctx) }()
			return nil
		},
		OnStop: func(context.Context) error { cancel(); wg.Wait(); return nil },
	})
}
