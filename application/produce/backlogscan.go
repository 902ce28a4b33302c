package produce

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/narad/narad/ports"
)

// Bounds of one topic's backlog scan (internals.md §7.9): at most a
// million backlog records read, 15 s, one scan per topic at a time and
// two at once.
const (
	backlogScanRecordsMax = 1_000_000
	backlogScanTimeout    = 15 * time.Second
	backlogScansAtOnceMax = 2
	backlogScanBatchMax   = 128 // records per WAL read: bounds the memory of one read
)

// BacklogScanner counts one topic's records in this node's dispatch
// backlog: accepted (answered 202) and not yet committed to an owner. It
// reads the WAL from the checkpoint to the durable end as both stood when
// the scan began; a record committed out of order above the checkpoint is
// counted too, so the count is an upper bound that reaches zero only when
// nothing of the topic is left. Safe for concurrent use.
type BacklogScanner struct {
	wal     DispatchWAL
	slots   chan struct{}
	mu      sync.Mutex
	running map[string]*backlogScan
}

// backlogScan is one topic's scan in flight; later askers share it.
type backlogScan struct {
	done chan struct{}
	out  ports.TopicBacklog
	err  error
}

// NewBacklogScanner returns a scanner of wal; it panics on a nil wal.
func NewBacklogScanner(wal DispatchWAL) *BacklogScanner {
	if wal == nil {
		panic("produce: backlog scanner needs a WAL")
	}
	return &BacklogScanner{wal: wal, slots: make(chan struct{}, backlogScansAtOnceMax), running: map[string]*backlogScan{}}
}

// TopicBacklog counts topic's backlog records. A scan of the same topic
// already running is shared; a scan that stopped at its record or time
// bound answers Complete false. Errors: ctx.Err() while waiting for a
// slot, or the WAL's read error.
func (s *BacklogScanner) TopicBacklog(ctx context.Context, topic string) (ports.TopicBacklog, error) {
	s.mu.Lock()
	sc, ok := s.running[topic]
	if !ok {
		sc = &backlogScan{done: make(chan struct{})}
		s.running[topic] = sc
	}
	s.mu.Unlock()
	if !ok {
		s.run(ctx, topic, sc)
	}
	select {
	case <-sc.done:
		return sc.out, sc.err
	case <-ctx.Done():
		return ports.TopicBacklog{}, ctx.Err()
	}
}

// run scans for topic within a slot, then publishes the result.
func (s *BacklogScanner) run(ctx context.Context, topic string, sc *backlogScan) {
	defer func() {
		s.mu.Lock()
		delete(s.running, topic)
		s.mu.Unlock()
		close(sc.done)
	}()
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		sc.err = ctx.Err()
		return
	}
	defer func() { <-s.slots }()
	ctx, cancel := context.WithTimeout(ctx, backlogScanTimeout)
	defer cancel()
	sc.out, sc.err = s.scan(ctx, topic)
}

// scan reads [checkpoint, durable end) in batches and counts topic's
// records, stopping incomplete at the record bound or the deadline.
func (s *BacklogScanner) scan(ctx context.Context, topic string) (ports.TopicBacklog, error) {
	from, end := s.wal.Checkpoint(), s.wal.DurableNext()
	out := ports.TopicBacklog{Complete: true}
	for read := 0; from < end; {
		if read >= backlogScanRecordsMax || ctx.Err() != nil {
			out.Complete = false
			return out, nil
		}
		n := int(min(end-from, uint64(backlogScanBatchMax), uint64(backlogScanRecordsMax-read)))
		entries, err := s.wal.ReadFrom(from, n)
		if err != nil {
			return out, fmt.Errorf("produce: backlog scan of %q from %d: %w", topic, from, err)
		}
		if len(entries) == 0 {
			break // compacted under the scan: what is left was committed
		}
		for _, e := range entries {
			if e.Record.Topic == topic {
				out.Records++
			}
		}
		read += len(entries)
		from = entries[len(entries)-1].Seq + 1
	}
	return out, nil
}
