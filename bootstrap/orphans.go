package bootstrap

import (
	"context"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/segmentlog"
	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/application/orphans"
	"github.com/narad/narad/ports"
)

// latchPollInterval paces a worker waiting for the ownership latch.
const latchPollInterval = time.Second

// orphansModule runs the startup orphan sweep and the delete purge once the
// replica is caught up (internals.md §9.8).
var orphansModule = fx.Module("orphans", fx.Invoke(runOrphanSweep, runDeletePurge))

func runOrphanSweep(lc fx.Lifecycle, s ports.MetadataStore, dirs *segmentlog.Store, conf *leaderconfirm.Confirmer,
	latch *leaderconfirm.Latch, log *zap.Logger) {
	sw := orphans.New(s, dirs, conf, newSlog(log.With(zap.String("component", "orphan-sweep"))))
	runWorker(lc, func(ctx context.Context) {
		if waitLatch(ctx, latch) {
			sw.Run(ctx)
		}
	})
}

// runDeletePurge removes this node's directories of every deleted topic
// incarnation as its delete applies, whichever node served the delete.
func runDeletePurge(lc fx.Lifecycle, s ports.MetadataStore, dirs *segmentlog.Store, logs ports.PartitionLogs,
	conf *leaderconfirm.Confirmer, latch *leaderconfirm.Latch, log *zap.Logger) {
	log = log.With(zap.String("component", "delete-purge"))
	p := orphans.NewPurger(s, dirs, logs, conf, newSlog(log))
	runWorker(lc, func(ctx context.Context) {
		if !waitLatch(ctx, latch) {
			return
		}
		if err := p.Run(ctx); err != nil {
			log.Error("delete purge stopped", zap.Error(err))
		}
	})
}

// waitLatch polls the ownership latch until it is set (true) or ctx ends.
func waitLatch(ctx context.Context, latch *leaderconfirm.Latch) bool {
	return pollUntil(ctx, latchPollInterval, func() bool { return latch.Ready(ctx) }) == nil
}
