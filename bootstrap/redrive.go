package bootstrap

import (
	"context"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/application/redrive"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// redriveModule runs the redrive jobs of dead-letter topics while this node
// leads the metadata (docs/api-extensions.md "Redrive").
var redriveModule = fx.Module("redrive", fx.Invoke(runRedrive))

// redriveSource leases and acks dead letters through the consume use case,
// routed to their owners as any consume on this node.
type redriveSource struct{ svc *consume.Service }

func (s redriveSource) Lease(ctx context.Context, topic string, max int, wait time.Duration) ([]domain.Delivery, error) {
	return s.svc.Consume(ctx, consume.Request{Topic: topic, Mode: consume.ModeBatch, Max: max, Wait: wait, Identity: redriveIdentity})
}

func (s redriveSource) Ack(ctx context.Context, topic string, hs []domain.ReceiptHandle) ([]error, error) {
	return s.svc.AckBatch(ctx, topic, hs, consume.OpAck)
}

// redriveIdentity keys the per-identity consume cap for redrive jobs.
const redriveIdentity = "node:redrive"

// redriveSink produces redriven letters through the produce use case, as a
// batch produce to this node would be.
type redriveSink struct{ svc *produce.Service }

func (s redriveSink) Produce(ctx context.Context, topic string, msgs []redrive.Message) error {
	batch := make([]produce.Message, len(msgs))
	for i, m := range msgs {
		batch[i] = produce.Message{Key: m.Key, Payload: m.Payload}
	}
	return s.svc.AcceptBatch(ctx, topic, batch)
}

func runRedrive(lc fx.Lifecycle, s ports.MetadataStore, cs *consume.Service, ps *produce.Service, c ports.Clock,
	m ports.Metrics, latch *leaderconfirm.Latch, log *zap.Logger) {
	r := redrive.New(redrive.Deps{
		Store: s, Source: redriveSource{cs}, Sink: redriveSink{ps}, Clock: c, Metrics: m,
		Log: newSlog(log.With(zap.String("component", "redrive"))),
	})
	runWorker(lc, func(ctx context.Context) {
		if waitLatch(ctx, latch) {
			r.Run(ctx)
		}
	})
}
