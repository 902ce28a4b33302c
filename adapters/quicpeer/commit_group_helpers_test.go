package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// partitionCommitter answers each commit by its partition: the error of
// errs, or the partition × 10 as its first offset. Topic "hold" waits for
// the handler's context to end; with barrier set, every commit waits until
// barrier commits have arrived (or its context ends).
type partitionCommitter struct {
	errs    map[int32]error
	barrier int32

	arrived atomic.Int32
	all     chan struct{} // closed when barrier commits arrived
	ended   atomic.Int32  // "hold" commits whose context ended

	mu  sync.Mutex
	got []ports.CommitRequest
}

func newPartitionCommitter(errs map[int32]error, barrier int32) *partitionCommitter {
	return &partitionCommitter{errs: errs, barrier: barrier, all: make(chan struct{})}
}

func (c *partitionCommitter) CommitBatch(ctx context.Context, req ports.CommitRequest) (int64, error) {
	if c.arrived.Add(1) == c.barrier {
		close(c.all)
	}
	if err := c.wait(ctx, req); err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, req)
	if err := c.errs[req.Partition]; err != nil {
		return 0, err
	}
	return int64(req.Partition) * 10, nil
}

// wait holds a commit as its topic and the barrier say.
func (c *partitionCommitter) wait(ctx context.Context, req ports.CommitRequest) error {
	switch {
	case req.Topic == "hold":
		<-ctx.Done()
		c.ended.Add(1)
		return ctx.Err()
	case c.barrier == 0:
		return nil
	}
	select {
	case <-c.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// commits returns the batches it was asked to commit (refused ones too)
// but for "hold" ones, by partition.
func (c *partitionCommitter) commits() []ports.CommitRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.got)
	slices.SortFunc(out, func(a, b ports.CommitRequest) int { return int(a.Partition - b.Partition) })
	return out
}

// opCounts counts the requests a server's handlers received, by op.
type opCounts struct {
	mu sync.Mutex
	n  map[Op]int
}

func (o *opCounts) of(op Op) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n[op]
}

// groupOwner starts a node serving commits with c over real UDP: ops 11
// and 37, or with legacy op 11 only (a release before op 37). It counts
// the requests each op's handler received.
func groupOwner(t *testing.T, c Committer, legacy bool, o ServerOptions) (addr string, counts *opCounts) {
	t.Helper()
	srv, _ := newServer(t, o)
	if legacy {
		registerCommitBatch(srv, c)
	} else {
		RegisterCommit(srv, c)
	}
	counts = &opCounts{n: map[Op]int{}}
	for _, op := range []Op{OpCommitProduceBatch, OpCommitProduceBatches} {
		h := srv.handler(op)
		if h == nil {
			continue
		}
		srv.Handle(op, func(ctx context.Context, p []byte) ([]byte, error) {
			counts.mu.Lock()
			counts.n[op]++
			counts.mu.Unlock()
			return h(ctx, p)
		})
	}
	return srv.Addr().String(), counts
}

// outcomeClasses are the sentinels a commit outcome is told apart by.
var outcomeClasses = []error{
	domain.ErrNotOwner, domain.ErrTopicNotFound, domain.ErrUnavailable, domain.ErrInvalidArgument,
	domain.ErrRecordTooLarge, domain.ErrNoAnswer, domain.ErrNotSent, ErrRemote, ErrTimeout,
	ErrFrameTooLarge, ErrNoAddress, context.DeadlineExceeded,
}

// sameOutcome fails unless got is want to the letter: the same first
// offset, the same error text, classes and refusal detail.
func sameOutcome(t *testing.T, what string, got, want ports.CommitOutcome) {
	t.Helper()
	if got.First != want.First || fmt.Sprint(got.Err) != fmt.Sprint(want.Err) {
		t.Fatalf("%s: got %d, %v; want %d, %v", what, got.First, got.Err, want.First, want.Err)
	}
	for _, class := range outcomeClasses {
		if errors.Is(got.Err, class) != errors.Is(want.Err, class) {
			t.Fatalf("%s: %v is %q: %v, want %v", what, got.Err, class, errors.Is(got.Err, class), !errors.Is(got.Err, class))
		}
	}
	var g, w *domain.Refusal
	if errors.As(got.Err, &g) != errors.As(want.Err, &w) || (g != nil && g.Detail != w.Detail) {
		t.Fatalf("%s: refusal %+v, want %+v", what, g, w)
	}
}
