package consume

import (
	"context"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// waitRouted finds one record (or a batch, on a gateway) after an empty
// local pass, in the cluster order of api.md §2.14: a non-blocking probe of
// every other live owner; then, for the rest of the wait, a local long poll
// in slices of 100 ms doubling to 1 s, each followed by another round of
// probes. It returns the deliveries and the node that served them ("" for
// this node). A topic with no live owner yet is held for its wait, the
// route table read again every round.
//
// Delivery tokens (internals.md §5.5) are not built: a record landing on
// another owner while this node waits is found by the next round of
// probes, at most 1 s later.
func (s *Service) waitRouted(ctx context.Context, t meta.Topic, sc scope, req Request) ([]domain.Delivery, string, error) {
	deadline := time.Now().Add(max(req.Wait, 0))
	pause := reprobeIntervalMin
	for {
		owners, ownsLocal, err := s.remoteOwners(t)
		if err != nil {
			return nil, "", err
		}
		if ds, node := s.probe(ctx, owners, probeRequest(req, ownsLocal)); len(ds) > 0 {
			return ds, node, nil
		}
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		ds, err := s.waitForOne(ctx, t, sc, min(left, pause))
		if err != nil || len(ds) > 0 {
			return ds, "", err
		}
		pause = min(2*pause, reprobeIntervalMax)
	}
}

// probeRequest is what a probe asks an owner for: one record, or on a
// gateway (a node owning none of the topic) the whole batch (api.md
// §2.14.3).
func probeRequest(req Request, ownsLocal bool) ports.RemoteConsume {
	r := remoteRequest(req)
	if req.Mode == ModeBatch && ownsLocal {
		r.Mode, r.Max = ports.ConsumeQueue, 0
	}
	return r
}
