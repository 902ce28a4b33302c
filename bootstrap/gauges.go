package bootstrap

import (
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/segmentlog"
	"github.com/narad/narad/adapters/telemetry"
	"github.com/narad/narad/adapters/wal"
	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/bootstrap/config"
	"github.com/narad/narad/ports"
)

// registerNodeGauges exports, at scrape time, the node-level values other
// components own (api.md §7).
func registerNodeGauges(m *telemetry.Metrics, w *wal.WAL, logs *segmentlog.Store, store ports.MetadataStore, id NodeIdentity, cfg config.Config, log *zap.Logger) {
	m.GaugeFunc("narad_ingress_wal_failed", "1 once the ingress log failed: produces that need it are refused until a restart.", func() float64 {
		if w.Failed() {
			return 1
		}
		return 0
	})
	m.GaugeFunc("narad_ingress_dispatch_backlog_records", "Accepted records not yet confirmed at their owners (an upper bound).", func() float64 {
		return float64(w.DurableNext() - w.Checkpoint())
	})
	m.GaugeFunc("narad_open_partition_logs", "Open partition logs on this node.", func() float64 {
		return float64(logs.Stats().OpenLogs)
	})
	m.CounterFunc("narad_idle_logs_evicted_total", "Logs closed by idle eviction.", func() float64 {
		return float64(logs.Stats().LogsEvicted)
	})
	view := newOwnedView(store, id.ID)
	m.GaugeFunc("narad_topics_total", "Topics in the cluster.", func() float64 {
		topics, _, err := view.read()
		if err != nil {
			log.Debug("topics gauge", zap.Error(err))
			return 0
		}
		return float64(topics)
	})
	m.GaugeFunc("narad_partitions_total", "Partitions this node owns.", func() float64 {
		_, owned, err := view.read()
		if err != nil {
			return 0
		}
		return float64(len(owned))
	})
	m.GaugeFunc("narad_colocated_child_partitions", "Child partitions on the node that owns their parent's partition (the same count on every node).", func() float64 {
		n, err := view.colocatedCount()
		if err != nil {
			return 0
		}
		return float64(n)
	})
	m.DataDirGauges(cfg.Storage.DataDir)
	m.SizeGauges(func() []telemetry.SizeSample { return localSizes(view, logs) })
}

// localSizes reads the storage of every partition this node owns through
// LogStats, a peek that never opens a closed log. A partition whose
// statistics cannot be read is left out of this scrape.
func localSizes(view *ownedView, logs ports.PartitionLogs) []telemetry.SizeSample {
	_, owned, err := view.read()
	if err != nil {
		return nil
	}
	out := make([]telemetry.SizeSample, 0, len(owned))
	for _, ref := range owned {
		st, err := logs.LogStats(ref)
		if err != nil {
			continue
		}
		out = append(out, telemetry.SizeSample{Topic: ref.Topic, Partition: ref.Partition, Bytes: st.SizeBytes, Segments: st.Segments})
	}
	return out
}

// registerPartitionGauges exports each local partition's leases, acked-ahead
// set, lag (high watermark minus the committed frontier), retention drops
// and the age of its oldest unacked record at scrape time; the age is read
// only from open logs, without stamping use.
func registerPartitionGauges(m *telemetry.Metrics, svc *consume.Service, logs *segmentlog.Store, c ports.Clock) {
	m.PartitionGauges(func() []telemetry.PartitionSample {
		stats := svc.Stats()
		now := c.Now().UnixMilli()
		out := make([]telemetry.PartitionSample, 0, len(stats))
		for _, s := range stats {
			sample := telemetry.PartitionSample{Topic: s.Ref.Topic, Partition: s.Ref.Partition,
				InFlight: s.InFlight, AckedAhead: s.AckedAhead, Dropped: s.Dropped, NackDelayed: s.Deferred, Lag: -1, OldestAgeSeconds: -1}
			if b, err := logs.Bounds(s.Ref); err == nil {
				sample.Lag = max(b.HighWatermark-(s.Committed+1), 0)
				sample.OldestAgeSeconds = oldestAge(logs, s, b.HighWatermark, now)
			}
			out = append(out, sample)
		}
		return out
	})
}

// oldestAge is the age in seconds of the record at the frontier, 0 when
// every record is settled, -1 when it cannot be read without opening a log.
func oldestAge(logs *segmentlog.Store, s consume.ShardStats, hwm, nowMs int64) float64 {
	if s.Committed+1 >= hwm {
		return 0
	}
	at, ok := logs.PeekCommittedAt(s.Ref, s.Committed+1)
	if !ok {
		return -1
	}
	return float64(max(nowMs-at, 0)) / 1000
}
