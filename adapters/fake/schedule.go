package fake

import (
	"context"
	"slices"
	"sync"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.PartitionSchedule = (*Schedule)(nil)

// Schedule is an in-memory ports.PartitionSchedule that releases into Logs
// through CommitDurable: records come out earliest deliver-at first, never
// before it. FailNext arms one failure of the next Schedule or Release.
// Safe for concurrent use.
type Schedule struct {
	Logs ports.PartitionWriter

	mu       sync.Mutex
	held     map[domain.PartitionRef][]domain.Record
	wake     chan struct{}
	failNext error
}

// FailNext makes the next Schedule or Release answer err, keeping nothing.
func (s *Schedule) FailNext(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = err
}

func (s *Schedule) takeFailure() error {
	err := s.failNext
	s.failNext = nil
	return err
}

// Schedule implements ports.PartitionSchedule.
func (s *Schedule) Schedule(_ context.Context, ref domain.PartitionRef, recs []domain.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.takeFailure(); err != nil {
		return err
	}
	if s.held == nil {
		s.held = map[domain.PartitionRef][]domain.Record{}
	}
	held := append(s.held[ref], recs...)
	slices.SortStableFunc(held, func(a, b domain.Record) int { return int(a.DeliverAtMs - b.DeliverAtMs) })
	s.held[ref] = held
	if s.wake != nil {
		close(s.wake)
		s.wake = nil
	}
	return nil
}

// Release implements ports.PartitionSchedule.
func (s *Schedule) Release(ctx context.Context, ref domain.PartitionRef, nowMs int64, maxRecords int) (ports.Released, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.takeFailure(); err != nil {
		return ports.Released{}, err
	}
	held := s.held[ref]
	n := 0
	for n < len(held) && n < maxRecords && held[n].DeliverAtMs <= nowMs {
		n++
	}
	if n == 0 {
		return ports.Released{}, nil
	}
	out := ports.Released{Count: n}
	recs := make([]domain.Record, n)
	for i, r := range held[:n] {
		recs[i] = domain.Record{Key: r.Key, Payload: r.Payload, CommittedAtMs: nowMs}
		out.Bytes += len(r.Payload)
		out.LagMs = append(out.LagMs, nowMs-r.DeliverAtMs)
	}
	if _, err := s.Logs.CommitDurable(ctx, ref, recs); err != nil {
		return ports.Released{}, err
	}
	s.held[ref] = held[n:]
	return out, nil
}

// Scheduled implements ports.PartitionSchedule.
func (s *Schedule) Scheduled() ([]ports.ScheduledPartition, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ports.ScheduledPartition
	for ref, held := range s.held {
		if len(held) > 0 {
			out = append(out, ports.ScheduledPartition{Ref: ref, NextMs: held[0].DeliverAtMs, Count: int64(len(held))})
		}
	}
	return out, nil
}

// ScheduleChanged implements ports.PartitionSchedule.
func (s *Schedule) ScheduleChanged() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wake == nil {
		s.wake = make(chan struct{})
	}
	return s.wake
}

// Held is what ref holds scheduled now, earliest first.
func (s *Schedule) Held(ref domain.PartitionRef) []domain.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.held[ref])
}
