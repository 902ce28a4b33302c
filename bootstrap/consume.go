package bootstrap

import (
	"context"
	"crypto/rand"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/httpapi"
	"github.com/narad/narad/adapters/offsetstore"
	"github.com/narad/narad/adapters/quicpeer"
	"github.com/narad/narad/adapters/receivelog"
	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/bootstrap/config"
	"github.com/narad/narad/ports"
)

// consumeModule serves consume, ack and replay, runs the lease purger, the
// long-poll pump and the offset committer, and forgets deleted topics.
var consumeModule = fx.Module("consume",
	fx.Provide(
		newOffsetStore,
		newReceiveLog,
		newConsumeService,
		asRoutes(func(cfg config.Config, svc *consume.Service, log *zap.Logger) []httpapi.Route {
			return httpapi.ConsumeRoutes(svc, log, cfg.HTTP.MaxConsumeWait.D(), nil)
		}),
	),
	fx.Invoke(runConsume, registerPartitionGauges),
)

func newOffsetStore(lc fx.Lifecycle, cfg config.Config) (ports.OffsetStore, error) {
	s, err := offsetstore.New(offsetstore.Options{FS: vfs.OS{}, DataDir: cfg.Storage.DataDir})
	if err != nil {
		return nil, err
	}
	lc.Append(fx.StopHook(s.Close))
	return s, nil
}

func newReceiveLog(lc fx.Lifecycle, cfg config.Config) (ports.ReceiveLog, error) {
	s, err := receivelog.New(receivelog.Options{FS: vfs.OS{}, DataDir: cfg.Storage.DataDir})
	if err != nil {
		return nil, err
	}
	lc.Append(fx.StopHook(s.Close))
	return s, nil
}

// deadLetterSink writes dead letters through the produce path, as any
// produce to this node would be.
type deadLetterSink struct{ svc *produce.Service }

func (d deadLetterSink) ProduceDeadLetter(ctx context.Context, topic string, key, payload []byte) error {
	return d.svc.Accept(ctx, produce.Request{Topic: topic, Key: key, Payload: payload})
}

func newConsumeService(cfg config.Config, s ports.MetadataStore, logs ports.PartitionLogs, offsets ports.OffsetStore,
	receives ports.ReceiveLog, producer *produce.Service,
	peers *quicpeer.Peers, c ports.Clock, m ports.Metrics, id NodeIdentity, log *zap.Logger) (*consume.Service, error) {
	return consume.New(consume.Deps{
		Topics: s, Cluster: s, Logs: logs, Offsets: offsets, Peers: peers, Tokens: peers, Clock: c, Metrics: m, SelfID: id.ID,
		Receives: receives, DeadLetters: deadLetterSink{producer},
		Seeds: rand.Reader, Logger: newSlog(log.With(zap.String("component", "consume"))),
	}, consume.Options{
		DurabilityInterval:     time.Duration(cfg.Storage.ConsumerOffsetCommitIntervalMs) * time.Millisecond,
		MaxInFlightPerIdentity: cfg.HTTP.MaxConsumeInFlightPerIdentity,
	})
}

// runConsume runs the service's loops; at stop it writes every frontier
// exactly (Close) before the offset store and partition logs close.
func runConsume(lc fx.Lifecycle, svc *consume.Service, s ports.MetadataStore, log *zap.Logger) {
	lc.Append(fx.StopHook(svc.Close))
	runWorker(lc, func(ctx context.Context) {
		if err := svc.Run(ctx); err != nil {
			log.Error("consume loops stopped", zap.Error(err))
		}
	})
	runWorker(lc, func(ctx context.Context) {
		if err := svc.ForgetDeleted(ctx, s); err != nil {
			log.Error("delete watcher stopped", zap.Error(err))
		}
	})
}
