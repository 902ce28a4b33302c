package fake

import (
	"context"
	"slices"
	"sync"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/deadletter"
	"github.com/narad/narad/ports"
)

var (
	_ ports.ReceiveLog     = (*ReceiveLog)(nil)
	_ ports.DeadLetterSink = (*DeadLetterSink)(nil)
)

// ReceiveLog is an in-memory ports.ReceiveLog: every Append is durable at
// once, so a service started over the same ReceiveLog sees what the last
// one appended (a restart).
type ReceiveLog struct {
	mu       sync.Mutex
	recs     map[domain.PartitionRef][]deadletter.Record
	appends  int
	compacts int
	failNext error
	// SizeOverride, when > 0, is what Size answers, to drive compaction.
	SizeOverride int64
	// OnLoad, when set, runs at each Load before it answers (set it before
	// the service runs).
	OnLoad func(ref domain.PartitionRef)
}

// NewReceiveLog returns an empty ReceiveLog.
func NewReceiveLog() *ReceiveLog {
	return &ReceiveLog{recs: map[domain.PartitionRef][]deadletter.Record{}}
}

// Load implements ports.ReceiveLog.
func (f *ReceiveLog) Load(ref domain.PartitionRef) ([]deadletter.Record, error) {
	if f.OnLoad != nil {
		f.OnLoad(ref)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.recs[ref]), nil
}

// Append implements ports.ReceiveLog.
func (f *ReceiveLog) Append(ref domain.PartitionRef, recs []deadletter.Record) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.failNext; err != nil {
		f.failNext = nil
		return err
	}
	f.appends++
	f.recs[ref] = append(f.recs[ref], recs...)
	return nil
}

// Compact implements ports.ReceiveLog.
func (f *ReceiveLog) Compact(ref domain.PartitionRef, live []deadletter.Record) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.compacts++
	f.recs[ref] = slices.Clone(live)
	return nil
}

// Size implements ports.ReceiveLog: 32 bytes a record, or SizeOverride.
func (f *ReceiveLog) Size(ref domain.PartitionRef) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.SizeOverride > 0 {
		return f.SizeOverride
	}
	return int64(32 * len(f.recs[ref]))
}

// Forget implements ports.ReceiveLog.
func (f *ReceiveLog) Forget(domain.PartitionRef) {}

// Close implements ports.ReceiveLog.
func (f *ReceiveLog) Close() error { return nil }

// FailNextAppend makes the next Append fail with err, writing nothing.
func (f *ReceiveLog) FailNextAppend(err error) {
	f.mu.Lock()
	f.failNext = err
	f.mu.Unlock()
}

// Records is what ref's log holds now.
func (f *ReceiveLog) Records(ref domain.PartitionRef) []deadletter.Record {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.recs[ref])
}

// Counts reports the appends and compactions so far.
func (f *ReceiveLog) Counts() (appends, compacts int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.appends, f.compacts
}

// DeadLetter is one write a DeadLetterSink took.
type DeadLetter struct {
	Topic        string
	Key, Payload []byte
}

// DeadLetterSink is an in-memory ports.DeadLetterSink that records what it
// was given; Fail makes writes fail until cleared.
type DeadLetterSink struct {
	mu      sync.Mutex
	letters []DeadLetter
	fail    error
	written chan struct{}
}

// NewDeadLetterSink returns a sink that takes every write.
func NewDeadLetterSink() *DeadLetterSink {
	return &DeadLetterSink{written: make(chan struct{}, 1024)}
}

// ProduceDeadLetter implements ports.DeadLetterSink.
func (f *DeadLetterSink) ProduceDeadLetter(_ context.Context, topic string, key, payload []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	f.letters = append(f.letters, DeadLetter{Topic: topic, Key: slices.Clone(key), Payload: slices.Clone(payload)})
	select {
	case f.written <- struct{}{}:
	default:
	}
	return nil
}

// Fail makes every write fail with err (nil: take them again).
func (f *DeadLetterSink) Fail(err error) {
	f.mu.Lock()
	f.fail = err
	f.mu.Unlock()
}

// Letters lists the writes taken so far.
func (f *DeadLetterSink) Letters() []DeadLetter {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.letters)
}

// Written signals each write taken (buffered; a full buffer drops signals).
func (f *DeadLetterSink) Written() <-chan struct{} { return f.written }
