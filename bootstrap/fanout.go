package bootstrap

import (
	"context"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/cursorfile"
	"github.com/narad/narad/adapters/telemetry"
	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/application/fanout"
	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/application/shipping"
	"github.com/narad/narad/bootstrap/config"
	"github.com/narad/narad/ports"
)

var _ fanout.Metrics = (*telemetry.FanoutMetrics)(nil)

// fanoutModule runs the fan-out engine: the cursors copying each parent
// partition this node owns into its local children, with their cursor
// files beside the parent's log, and the reader of their lag.
var fanoutModule = fx.Module("fanout",
	fx.Provide(
		newFanoutCursors,
		newFanoutEngine,
		newFanoutLag,
	),
	fx.Invoke(runFanout),
)

func newFanoutCursors(cfg config.Config) (ports.FanoutCursors, error) {
	return cursorfile.New(cursorfile.Options{FS: vfs.OS{}, DataDir: cfg.Storage.DataDir})
}

func newFanoutEngine(cfg config.Config, s ports.MetadataStore, logs ports.PartitionLogs, cursors ports.FanoutCursors,
	local *produce.Committer, peers ports.PeerCommitter, l *leaderconfirm.Latch, conf *leaderconfirm.Confirmer,
	c ports.Clock, m *telemetry.Metrics, id NodeIdentity, markers ports.MoveMarkers, shipper *shipping.Shipper, log *zap.Logger) *fanout.Engine {
	engine := fanout.New(fanout.Deps{
		Store: s, Logs: logs, Cursors: cursors, Local: local, Peers: peers, Latch: l, Confirmer: conf, Markers: markers, Remote: shipper,
		Clock: c, Metrics: m.Fanout(), Log: newSlog(log.With(zap.String("component", "fanout"))), Self: id.ID,
	}, fanoutOptions(cfg.Fanout))
	m.FanoutGauges(func() []telemetry.FanoutSample { return fanoutSamples(engine) })
	return engine
}

// newFanoutLag reads where this node's cursors stand: the children
// listing's local half and the owner side of op 17.
func newFanoutLag(e *fanout.Engine, logs ports.PartitionLogs) *fanout.LagReader {
	return fanout.NewLagReader(e, logs)
}

// fanoutOptions maps fanout.* settings; a linger of 0 means none.
func fanoutOptions(f config.Fanout) fanout.Options {
	o := fanout.Options{BatchMaxRecords: f.MaxBatchRecords, BatchMaxBytes: int(f.MaxBatchBytes),
		Linger: time.Duration(f.LingerMs) * time.Millisecond}
	if f.LingerMs == 0 {
		o.Linger = -1
	}
	return o
}

func fanoutSamples(e *fanout.Engine) []telemetry.FanoutSample {
	cs := e.Cursors()
	out := make([]telemetry.FanoutSample, len(cs))
	for i, c := range cs {
		out[i] = telemetry.FanoutSample{Parent: c.Parent, Child: c.Child, Partition: c.Partition, Lag: c.Lag,
			Delayed: c.DelayMs > 0, DueLagSeconds: c.DueLagSeconds}
	}
	return out
}

// runFanout starts the engine with the other workers (it waits for the
// ownership latch itself) and stops it, waiting for every cursor, before
// the partition logs close.
func runFanout(lc fx.Lifecycle, e *fanout.Engine, log *zap.Logger) {
	runWorker(lc, func(ctx context.Context) {
		if err := e.Run(ctx); err != nil {
			log.Error("fan-out engine stopped", zap.Error(err))
		}
	})
}
