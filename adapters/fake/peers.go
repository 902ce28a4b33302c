package fake

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// Transport failures the peer fakes inject, one of each class of the peer
// ports (ports.PeerForwarder). A test arms an owner's refusal by passing
// the owner's domain error itself.
var (
	// ErrFakePeerFailure is what FailNext(nil) arms: sent, no answer
	// (domain.ErrNoAnswer), outcome unknown.
	ErrFakePeerFailure = fmt.Errorf("fake peers: injected transport failure: %w", domain.ErrNoAnswer)
	// ErrFakePeerNotSent: the request never left (domain.ErrNotSent); the
	// peer did not act.
	ErrFakePeerNotSent = fmt.Errorf("fake peers: injected failure before sending: %w", domain.ErrNotSent)
)

var _ ports.PeerCommitter = (*PeerCommitter)(nil)

// PeerCommit is one commit a PeerCommitter acknowledged.
type PeerCommit struct {
	Node  string
	Req   ports.CommitRequest
	First int64
}

// PeerCommitter is an in-memory ports.PeerCommitter: every node it is asked
// about owns every partition and commits at once, at dense offsets per
// (node, topic, partition). FailNext makes the next call fail; Fail makes
// every call to one node fail until Heal. A failed call commits nothing.
// Safe for concurrent use.
type PeerCommitter struct {
	mu       sync.Mutex
	commits  []PeerCommit
	offsets  map[string]int64
	failNext error
	failing  map[string]error
	attempts map[string]int
}

// NewPeerCommitter returns a PeerCommitter that has committed nothing.
func NewPeerCommitter() *PeerCommitter {
	return &PeerCommitter{offsets: map[string]int64{}, failing: map[string]error{}, attempts: map[string]int{}}
}

// Fail makes every later CommitBatch to node fail with err
// (ErrFakePeerFailure when nil) until Heal(node).
func (p *PeerCommitter) Fail(node string, err error) {
	if err == nil {
		err = ErrFakePeerFailure
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failing[node] = err
}

// Heal ends Fail(node).
func (p *PeerCommitter) Heal(node string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.failing, node)
}

// Attempts returns how many CommitBatch calls reached node, failed or not.
func (p *PeerCommitter) Attempts(node string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.attempts[node]
}

// FailNext makes the next CommitBatch fail with err (ErrFakePeerFailure
// when nil) and commit nothing.
func (p *PeerCommitter) FailNext(err error) {
	if err == nil {
		err = ErrFakePeerFailure
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failNext = err
}

// CommitBatch records a copy of req as committed on node.
func (p *PeerCommitter) CommitBatch(ctx context.Context, node string, req ports.CommitRequest) (int64, error) {
	if len(req.Records) == 0 {
		return 0, fmt.Errorf("fake peers: empty batch: %w", domain.ErrInvalidRecord)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.attempts[node]++
	if err := p.failNext; err != nil {
		p.failNext = nil
		return 0, err
	}
	if err := p.failing[node]; err != nil {
		return 0, err
	}
	k := fmt.Sprintf("%s\x00%s\x00%d", node, req.Topic, req.Partition)
	first := p.offsets[k]
	p.offsets[k] = first + int64(len(req.Records))
	c := req
	c.Records = make([]domain.Record, len(req.Records))
	for i, r := range req.Records {
		c.Records[i] = domain.Record{Offset: first + int64(i), Key: bytes.Clone(r.Key), Payload: bytes.Clone(r.Payload), CommittedAtMs: r.CommittedAtMs}
	}
	p.commits = append(p.commits, PeerCommit{Node: node, Req: c, First: first})
	return first, nil
}

// CommitBatches commits each of reqs as CommitBatch would, in order; a
// FailNext applies to the first only. Attempts counts each batch.
func (p *PeerCommitter) CommitBatches(ctx context.Context, node string, reqs []ports.CommitRequest) []ports.CommitOutcome {
	out := make([]ports.CommitOutcome, len(reqs))
	for i, req := range reqs {
		out[i].First, out[i].Err = p.CommitBatch(ctx, node, req)
	}
	return out
}

// Commits returns the acknowledged commits in order.
func (p *PeerCommitter) Commits() []PeerCommit {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]PeerCommit(nil), p.commits...)
}
