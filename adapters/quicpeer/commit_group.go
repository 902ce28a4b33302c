package quicpeer

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/narad/narad/ports"
)

// CommitBatches commits each of reqs on node and answers each exactly as
// CommitBatch would have answered it alone (ports.PeerCommitter). The
// batches go as few CommitProduceBatches (op 37) requests as the frame
// allows, one where they fit in 16 MiB, run concurrently; a request's
// transport failure is repeated in each of its outcomes. A batch that
// CommitBatch would refuse before sending, or that op 37 could not carry
// without its owner refusing the whole request (too many records, a name
// above the wire cap, too large for a frame of its own), goes alone as
// op 11 and gets op 11's answer; so does a lone batch. An owner that
// answers op 37 as an unknown op (an older release) gets those batches as
// op 11 calls, concurrently on what is left of ctx, and op 11 only for
// legacyPeerMemory.
func (p *Peers) CommitBatches(ctx context.Context, node string, reqs []ports.CommitRequest) []ports.CommitOutcome {
	out := make([]ports.CommitOutcome, len(reqs))
	groups := planCommitGroups(reqs)
	concurrently(len(groups), func(g int) { p.commitGroup(ctx, node, reqs, groups[g], out) })
	return out
}

// planCommitGroups splits the indexes of reqs into the calls that carry
// them, in order: groups of at most commitGroupMaxCount batches whose
// op-37 request fits a frame, and a group of its own for each batch op 37
// cannot carry.
func planCommitGroups(reqs []ports.CommitRequest) [][]int {
	var groups [][]int
	var open []int
	size := commitGroupCountBytes
	for i, req := range reqs {
		item := commitGroupItemSize(req)
		if !groupable(req, item) {
			groups = append(groups, []int{i})
			continue
		}
		if len(open) == commitGroupMaxCount || 1+size+item > framePayloadMaxBytes {
			groups = append(groups, open)
			open, size = nil, commitGroupCountBytes
		}
		open = append(open, i)
		size += item
	}
	if len(open) > 0 {
		groups = append(groups, open)
	}
	return groups
}

// groupable reports whether an op-37 request can carry req, which adds
// item bytes to it: a batch the owner would refuse to decode, or one too
// large for a request of its own, would have the whole request refused.
func groupable(req ports.CommitRequest, item int) bool {
	return !scheduled(req) && len(req.Records) <= commitRecordsMaxCount && len(req.Topic) <= wireNameMaxBytes &&
		len(req.TopicID) <= wireNameMaxBytes && 1+commitGroupCountBytes+item <= framePayloadMaxBytes
}

// commitGroup commits the batches of reqs at idx and answers their
// outcomes in out: several as one op-37 request unless node is known not
// to serve it, one (or those node refused as op 37) as op 11 each.
func (p *Peers) commitGroup(ctx context.Context, node string, reqs []ports.CommitRequest, idx []int, out []ports.CommitOutcome) {
	if len(idx) > 1 && !p.groups.legacy(node) {
		outs, err := p.commitBatches(ctx, node, pick(reqs, idx))
		if !errors.Is(err, ErrUnsupportedOp) {
			for k, i := range idx {
				if err != nil {
					out[i] = ports.CommitOutcome{Err: err}
				} else {
					out[i] = outs[k]
				}
			}
			return
		}
		p.groups.remember(node)
	}
	p.commitEach(ctx, node, reqs, idx, out)
}

// commitBatches sends reqs to node as one op-37 request and reads its
// outcomes; err is the request's failure as a whole.
func (p *Peers) commitBatches(ctx context.Context, node string, reqs []ports.CommitRequest) ([]ports.CommitOutcome, error) {
	payload := appendCommitGroup(make([]byte, 0, commitGroupSize(reqs)), reqs)
	items, err := callList(ctx, p, node, OpCommitProduceBatches, payload, "commit group", len(reqs), decodeCommitGroupReply)
	if err != nil {
		return nil, err
	}
	outs := make([]ports.CommitOutcome, len(items))
	for i, item := range items {
		outs[i] = commitItemOutcome(item, node)
	}
	return outs, nil
}

// commitEach commits the batches of reqs at idx as op 11 each, concurrently.
func (p *Peers) commitEach(ctx context.Context, node string, reqs []ports.CommitRequest, idx []int, out []ports.CommitOutcome) {
	concurrently(len(idx), func(k int) {
		i := idx[k]
		out[i].First, out[i].Err = p.CommitBatch(ctx, node, reqs[i])
	})
}

func pick(reqs []ports.CommitRequest, idx []int) []ports.CommitRequest {
	out := make([]ports.CommitRequest, len(idx))
	for k, i := range idx {
		out[k] = reqs[i]
	}
	return out
}

// legacyPeers remembers the owners that answered an operation as unknown
// (older releases), each for legacyPeerMemory from its refusal. Safe for
// concurrent use.
type legacyPeers struct {
	now func() time.Time

	mu    sync.Mutex
	until map[string]time.Time
}

func newLegacyPeers() *legacyPeers {
	return &legacyPeers{now: time.Now, until: map[string]time.Time{}}
}

// remember starts node's legacyPeerMemory.
func (l *legacyPeers) remember(node string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.until[node] = l.now().Add(legacyPeerMemory)
}

// legacy reports whether node refused the operation less than
// legacyPeerMemory ago, forgetting it once that passed.
func (l *legacyPeers) legacy(node string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	until, ok := l.until[node]
	if ok && !l.now().Before(until) {
		delete(l.until, node)
		return false
	}
	return ok
}
