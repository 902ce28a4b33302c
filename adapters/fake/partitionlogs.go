package fake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ErrFakeCommitFailure is what FailNextCommit(nil) arms.
var ErrFakeCommitFailure = errors.New("fake partition logs: injected commit failure")

// ErrFakeStaleIncarnation answers a ref naming a replaced incarnation; it
// wraps domain.ErrLogClosed, like the real store's answer.
var ErrFakeStaleIncarnation = fmt.Errorf("fake partition logs: retired topic incarnation: %w", domain.ErrLogClosed)

var _ ports.PartitionLogs = (*PartitionLogs)(nil)

// PartitionLogs is an in-memory ports.PartitionLogs with the real store's
// observable contract: dense offsets from 0 per partition, the read-boundary
// errors, the commit-time floor, incarnation replacement dropping the old
// incarnation's records, Changed wake-ups, retention by a settable clock, and
// Remove. Every commit is durable at once. Restart gives a new instance over
// the same records, as a process restart would. Safe for concurrent use.
type PartitionLogs struct {
	data *plData

	// Guarded by data.mu.
	closed   bool
	floors   map[plKey]int64 // commit-time floors: in memory, lost on Restart
	watchers []*plWatcher    // OnChange's functions
}

type plWatcher struct{ fn func(topic string) }

// plData is what survives Restart.
type plData struct {
	mu       sync.Mutex
	now      time.Time
	topics   map[string]*plTopic
	wakes    map[plKey]chan struct{}
	failNext error
	frozen   map[plKey]bool
}

type plKey struct {
	topic     string
	partition int32
}

type plTopic struct {
	id        domain.TopicID
	retired   map[domain.TopicID]bool
	retention time.Duration
	parts     map[int32]*plPart
}

type plPart struct {
	oldest int64 // offset of recs[0]
	recs   []plRec
}

type plRec struct {
	rec domain.Record
	at  time.Time // the fake clock at commit, for retention
}

func (p *plPart) hwm() int64 { return p.oldest + int64(len(p.recs)) }

// NewPartitionLogs returns an empty fake whose clock starts at a fixed time.
func NewPartitionLogs() *PartitionLogs {
	data := &plData{now: time.Unix(1_700_000_000, 0), topics: map[string]*plTopic{}, wakes: map[plKey]chan struct{}{}}
	return &PartitionLogs{data: data, floors: map[plKey]int64{}}
}

// Restart returns a new instance over the same records; commit-time floors
// start again, as after a process restart.
func (f *PartitionLogs) Restart() *PartitionLogs {
	return &PartitionLogs{data: f.data, floors: map[plKey]int64{}}
}

// Advance moves the fake clock forward by d.
func (f *PartitionLogs) Advance(d time.Duration) {
	f.data.mu.Lock()
	defer f.data.mu.Unlock()
	f.data.now = f.data.now.Add(d)
}

// Now returns the fake clock.
func (f *PartitionLogs) Now() time.Time {
	f.data.mu.Lock()
	defer f.data.mu.Unlock()
	return f.data.now
}

// FailNextCommit makes the next CommitDurable fail with err (nil:
// ErrFakeCommitFailure), storing nothing.
func (f *PartitionLogs) FailNextCommit(err error) {
	if err == nil {
		err = ErrFakeCommitFailure
	}
	f.data.mu.Lock()
	defer f.data.mu.Unlock()
	f.data.failNext = err
}

func validRef(ref domain.PartitionRef) error {
	if err := domain.ValidateTopicName(ref.Topic); err != nil {
		return fmt.Errorf("fake partition logs: %w: %w", domain.ErrInvalidRecord, err)
	}
	if ref.Partition < 0 || !ref.TopicID.Valid() {
		return fmt.Errorf("fake partition logs: partition %d id %q: %w", ref.Partition, ref.TopicID, domain.ErrInvalidRecord)
	}
	return nil
}

// partLocked returns ref's partition, replacing the topic's incarnation when
// ref names a new one and refusing a retired one. create=false only peeks.
func (f *PartitionLogs) partLocked(ref domain.PartitionRef, create bool) (*plPart, error) {
	if f.closed {
		return nil, fmt.Errorf("fake partition logs: %w: %w", domain.ErrClosed, domain.ErrLogClosed)
	}
	t, ok := f.data.topics[ref.Topic]
	if !ok {
		t = &plTopic{id: ref.TopicID, retired: map[domain.TopicID]bool{}, parts: map[int32]*plPart{}}
		f.data.topics[ref.Topic] = t
	}
	switch id := ref.TopicID; {
	case id == "" || id == t.id:
	case t.retired[id]:
		return nil, ErrFakeStaleIncarnation
	case !create && t.id != "":
		return &plPart{}, nil // another incarnation's data: nothing of id's
	case t.id == "":
		t.id = id // adopt
	default:
		t.retired[t.id] = true
		t.id, t.parts = id, map[int32]*plPart{}
		for k := range f.floors {
			if k.topic == ref.Topic {
				delete(f.floors, k)
			}
		}
	}
	p, ok := t.parts[ref.Partition]
	if !ok {
		p = &plPart{}
		if create {
			t.parts[ref.Partition] = p
		}
	}
	f.expireLocked(t, p)
	return p, nil
}

// expireLocked drops the records older than the topic's retention.
func (f *PartitionLogs) expireLocked(t *plTopic, p *plPart) {
	if t.retention <= 0 {
		return
	}
	n := 0
	for n < len(p.recs) && f.data.now.Sub(p.recs[n].at) > t.retention {
		n++
	}
	p.oldest += int64(n)
	p.recs = p.recs[n:]
}

func (f *PartitionLogs) wakeLocked(k plKey) {
	if ch, ok := f.data.wakes[k]; ok {
		close(ch)
		delete(f.data.wakes, k)
	}
	for _, w := range f.watchers {
		w.fn(k.topic)
	}
}

// OnChange registers fn, called (under the fake's lock) with the topic's
// name after every commit and Remove of one of its partitions, and for
// every topic at Close. The returned function unregisters it.
func (f *PartitionLogs) OnChange(fn func(topic string)) (stop func()) {
	w := &plWatcher{fn: fn}
	f.data.mu.Lock()
	defer f.data.mu.Unlock()
	f.watchers = append(f.watchers, w)
	return func() {
		f.data.mu.Lock()
		defer f.data.mu.Unlock()
		f.watchers = slices.DeleteFunc(f.watchers, func(x *plWatcher) bool { return x == w })
	}
}

// CommitDurable appends copies of recs at the next offsets. A zero
// CommittedAtMs is stamped with the fake clock; times are raised to the
// partition's floor.
func (f *PartitionLogs) CommitDurable(ctx context.Context, ref domain.PartitionRef, recs []domain.Record) (int64, error) {
	if err := validRef(ref); err != nil {
		return 0, err
	}
	if len(recs) == 0 {
		return 0, fmt.Errorf("fake partition logs: empty batch: %w", domain.ErrInvalidRecord)
	}
	for _, r := range recs {
		if r.CommittedAtMs < 0 {
			return 0, fmt.Errorf("fake partition logs: negative commit time: %w", domain.ErrInvalidRecord)
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	f.data.mu.Lock()
	defer f.data.mu.Unlock()
	p, err := f.partLocked(ref, true)
	if err != nil {
		return 0, err
	}
	if err := f.data.failNext; err != nil {
		f.data.failNext = nil
		return 0, err
	}
	k := plKey{ref.Topic, ref.Partition}
	first, floor := p.hwm(), f.floors[k]
	for i, r := range recs {
		ms := r.CommittedAtMs
		if ms == 0 {
			ms = f.data.now.UnixMilli()
		}
		floor = max(floor, ms)
		rec := domain.Record{Offset: first + int64(i), Key: bytes.Clone(r.Key), Payload: bytes.Clone(r.Payload), CommittedAtMs: floor}
		p.recs = append(p.recs, plRec{rec: rec, at: f.data.now})
	}
	f.floors[k] = floor
	f.wakeLocked(k)
	return first, nil
}

// Read returns copies of up to maxRecords records from offset from, bounded
// by maxBytes of keys and payloads (at least one; maxBytes <= 0: no bound).
func (f *PartitionLogs) Read(ctx context.Context, ref domain.PartitionRef, from int64, maxRecords, maxBytes int) ([]domain.Record, error) {
	if err := validRef(ref); err != nil {
		return nil, err
	}
	if from < 0 {
		return nil, fmt.Errorf("fake partition logs: read at %d: %w", from, domain.ErrOffsetNegative)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.data.mu.Lock()
	defer f.data.mu.Unlock()
	p, err := f.partLocked(ref, true)
	switch {
	case err != nil:
		return nil, err
	case from >= p.hwm():
		return nil, fmt.Errorf("fake partition logs: read at %d, high watermark %d: %w", from, p.hwm(), domain.ErrOffsetNotWritten)
	case from < p.oldest:
		return nil, fmt.Errorf("fake partition logs: read at %d, oldest %d: %w", from, p.oldest, domain.ErrOffsetGone)
	}
	var out []domain.Record
	size := 0
	for _, r := range p.recs[from-p.oldest:] {
		n := len(r.rec.Key) + len(r.rec.Payload)
		if len(out) >= max(1, maxRecords) || (len(out) > 0 && maxBytes > 0 && size+n > maxBytes) {
			break
		}
		rec := r.rec
		rec.Key, rec.Payload = bytes.Clone(rec.Key), bytes.Clone(rec.Payload)
		out = append(out, rec)
		size += n
	}
	return out, nil
}

// Bounds reports the readable range.
func (f *PartitionLogs) Bounds(ref domain.PartitionRef) (ports.LogBounds, error) {
	if err := validRef(ref); err != nil {
		return ports.LogBounds{}, err
	}
	f.data.mu.Lock()
	defer f.data.mu.Unlock()
	p, err := f.partLocked(ref, false)
	if err != nil {
		return ports.LogBounds{}, err
	}
	return ports.LogBounds{Oldest: p.oldest, HighWatermark: p.hwm(), Frozen: f.data.frozen[plKey{ref.Topic, ref.Partition}]}, nil
}

// SetFrozen marks ref as held by a move's freeze in its Bounds (commits
// are not refused: use cases only read the flag).
func (f *PartitionLogs) SetFrozen(ref domain.PartitionRef, frozen bool) {
	f.data.mu.Lock()
	defer f.data.mu.Unlock()
	if f.data.frozen == nil {
		f.data.frozen = map[plKey]bool{}
	}
	f.data.frozen[plKey{ref.Topic, ref.Partition}] = frozen
}

// LogStats peeks at the partition like the real store's: one segment once
// the partition was written or read, SizeBytes the retained keys and
// payloads, OldestSegmentAt the fake clock at the last commit (zero while
// nothing is retained). A ref naming another incarnation reports zeros.
func (f *PartitionLogs) LogStats(ref domain.PartitionRef) (ports.LogStats, error) {
	if err := validRef(ref); err != nil {
		return ports.LogStats{}, err
	}
	f.data.mu.Lock()
	defer f.data.mu.Unlock()
	p, err := f.partLocked(ref, false)
	if err != nil {
		return ports.LogStats{}, err
	}
	st := ports.LogStats{OldestOffset: p.oldest, NextOffset: p.hwm(), HighWatermark: p.hwm()}
	if t := f.data.topics[ref.Topic]; t.parts[ref.Partition] == p {
		st.Segments = 1
	}
	for _, r := range p.recs {
		st.SizeBytes += int64(len(r.rec.Key) + len(r.rec.Payload))
	}
	if n := len(p.recs); n > 0 {
		st.OldestSegmentAt = p.recs[n-1].at
	}
	return st, nil
}

// Changed returns a channel closed at the partition's next commit, Remove
// or Close.
func (f *PartitionLogs) Changed(ref domain.PartitionRef) (<-chan struct{}, error) {
	if err := validRef(ref); err != nil {
		return nil, err
	}
	f.data.mu.Lock()
	defer f.data.mu.Unlock()
	if f.closed {
		return nil, fmt.Errorf("fake partition logs: %w", domain.ErrClosed)
	}
	k := plKey{ref.Topic, ref.Partition}
	ch, ok := f.data.wakes[k]
	if !ok {
		ch = make(chan struct{})
		f.data.wakes[k] = ch
	}
	return ch, nil
}

// SetRetention bounds the age (by the fake clock) of the topic's records.
func (f *PartitionLogs) SetRetention(topic string, id domain.TopicID, retention time.Duration) {
	f.data.mu.Lock()
	defer f.data.mu.Unlock()
	t, ok := f.data.topics[topic]
	if !ok {
		t = &plTopic{id: id, retired: map[domain.TopicID]bool{}, parts: map[int32]*plPart{}}
		f.data.topics[topic] = t
	}
	if id == "" || !t.retired[id] {
		t.retention = max(retention, 0)
	}
}

// Remove deletes the partition's records unless the topic now belongs to
// another incarnation.
func (f *PartitionLogs) Remove(ref domain.PartitionRef) error {
	if err := validRef(ref); err != nil {
		return err
	}
	f.data.mu.Lock()
	defer f.data.mu.Unlock()
	if f.closed {
		return fmt.Errorf("fake partition logs: %w", domain.ErrClosed)
	}
	t, ok := f.data.topics[ref.Topic]
	if !ok || (ref.TopicID != "" && t.id != "" && t.id != ref.TopicID) {
		return nil
	}
	k := plKey{ref.Topic, ref.Partition}
	delete(t.parts, ref.Partition)
	delete(f.floors, k)
	f.wakeLocked(k)
	return nil
}

// Close makes every later call fail with domain.ErrClosed and wakes every
// waiter.
func (f *PartitionLogs) Close() error {
	f.data.mu.Lock()
	defer f.data.mu.Unlock()
	f.closed = true
	for k, ch := range f.data.wakes {
		close(ch)
		delete(f.data.wakes, k)
	}
	for name := range f.data.topics {
		for _, w := range f.watchers {
			w.fn(name)
		}
	}
	return nil
}
