package consume

import (
	"context"
	"fmt"
	"sync"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// settleOps maps the use case's settle ops to the node RPC's.
var settleOps = [...]ports.SettleOp{OpAck: ports.SettleAck, OpExtend: ports.SettleExtend, OpNack: ports.SettleNack}

// groupRemote sorts a batch's handles of other nodes' partitions by owner
// (internals.md §5.9): a handle whose owner is marked dead is answered
// domain.ErrOwnerDown here without an RPC; the others are returned per
// live owner. Every handle it takes is flagged in remoteAt.
func (s *Service) groupRemote(t meta.Topic, hs []domain.ReceiptHandle, out []error, remoteAt []bool) (map[string][]int, error) {
	type route struct {
		where placement
		node  string
	}
	routes := map[int32]route{}
	var dead map[string]bool
	groups := map[string][]int{}
	for i, h := range hs {
		if h.Partition < 0 || h.Partition >= t.Partitions {
			continue // the local path answers 410
		}
		r, ok := routes[h.Partition]
		if !ok {
			where, node, err := s.placementOf(t, h.Partition)
			if err != nil {
				return nil, err
			}
			r = route{where, node}
			routes[h.Partition] = r
		}
		if r.where != remote {
			continue
		}
		if dead == nil {
			var err error
			if dead, err = s.deadMembers(); err != nil {
				return nil, err
			}
		}
		remoteAt[i] = true
		if dead[r.node] {
			out[i] = ownerDownErr(t, h.Partition, r.node)
			continue
		}
		groups[r.node] = append(groups[r.node], i)
	}
	return groups, nil
}

// settleGroups sends each owner its handles in one forward, the owners in
// parallel, and writes each handle's outcome at its index in out.
func (s *Service) settleGroups(ctx context.Context, topic string, hs []domain.ReceiptHandle, op Op, nack NackOptions, groups map[string][]int, out []error) {
	var wg sync.WaitGroup
	for node, at := range groups {
		wg.Go(func() {
			sub := make([]domain.ReceiptHandle, len(at))
			for j, i := range at {
				sub[j] = hs[i]
			}
			for j, err := range s.settleOnOwner(ctx, node, topic, sub, op, nack) {
				out[at[j]] = err // each goroutine writes its own indexes only
			}
		})
	}
	wg.Wait()
}

// settleOnOwner applies op to hs on node and answers one error per handle:
// the owner's answer, or for a transport failure domain.ErrOwnerNotReached
// when the forward never left (nothing applied) and domain.ErrOwnerNoAnswer
// when no answer came (the op may have been applied), each with the API's
// message. A nack with a delay or a reason goes as its own request
// (NackRemote).
func (s *Service) settleOnOwner(ctx context.Context, node, topic string, hs []domain.ReceiptHandle, op Op, nack NackOptions) []error {
	var errs []error
	var err error
	if op == OpNack && nack.remote() {
		errs, err = s.peers.NackRemote(ctx, node, topic, hs, ports.NackOptions(nack))
	} else {
		errs, err = s.peers.SettleRemote(ctx, node, topic, hs, settleOps[op])
	}
	if err == nil && len(errs) != len(hs) {
		err = fmt.Errorf("consume: %s answered %d outcomes for %d handles", node, len(errs), len(hs))
	}
	out := make([]error, len(hs))
	for j := range out {
		switch {
		case err != nil:
			out[j] = forwardFailure(ctx, node, err, settleRefusals)
		case errs[j] != nil:
			out[j] = forwardFailure(ctx, node, errs[j], settleRefusals)
		}
	}
	return out
}
