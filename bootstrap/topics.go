package bootstrap

import (
	"context"
	"crypto/rand"
	"sync"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/httpapi"
	"github.com/narad/narad/adapters/jsonschema"
	"github.com/narad/narad/adapters/metastore"
	"github.com/narad/narad/adapters/quicpeer"
	"github.com/narad/narad/adapters/telemetry"
	"github.com/narad/narad/application/fanout"
	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/bootstrap/config"
	"github.com/narad/narad/ports"
)

// topicsModule serves topic administration and keeps every partition log's
// retention in step with the topic records.
var topicsModule = fx.Module("topics",
	fx.Provide(
		func(m *telemetry.Metrics) ports.SchemaValidator {
			return jsonschema.New(jsonschema.Options{Observer: m.Schema()})
		},
		func() *PlacementLock { return &PlacementLock{} },
		newTopicService,
		asRoutes(httpapi.TopicRoutes),
	),
	fx.Invoke(runRetentionSync),
)

// PlacementLock is the node's one assignment lock, taken by topic creates
// and partition growth and by the controller's placement (internals §8.7).
type PlacementLock struct{ sync.Mutex }

// newTopicService asks other owners for their partitions' statistics
// (describe, the attach point) and cursor lag (children listing) through
// peers, and reads this node's cursors through lag.
func newTopicService(cfg config.Config, s ports.MetadataStore, logs ports.PartitionLogs, v ports.SchemaValidator, c ports.Clock,
	id NodeIdentity, peers *quicpeer.Peers, lag *fanout.LagReader, place *PlacementLock, raft *metastore.Store) (*topics.Service, error) {
	t := cfg.Topic
	return topics.New(s, logs, v, c, rand.Reader, topics.Defaults{
		Partitions: t.DefaultPartitions, MaxPartitions: t.MaxPartitions, RetentionMs: t.DefaultRetentionAgeMs,
		VisibilityMs: t.DefaultVisibilityTimeoutMs, MaxInFlight: t.DefaultMaxInFlightPerPartition,
		MaxAckedAhead: t.DefaultMaxAckedAheadPerPartition,
	}, id.ID, topics.WithPeerStats(peers), topics.WithFanoutLag(lag), topics.WithPeerFanoutLag(peers),
		topics.WithPlacementLock(place), topics.WithRaftServers(raft))
}

func runRetentionSync(lc fx.Lifecycle, s ports.MetadataStore, logs ports.PartitionLogs, log *zap.Logger) error {
	r, err := topics.NewRetentionSync(s, logs)
	if err != nil {
		return err
	}
	runWorker(lc, func(ctx context.Context) {
		if err := r.Run(ctx); err != nil {
			log.Error("retention sync stopped", zap.Error(err))
		}
	})
	return nil
}
