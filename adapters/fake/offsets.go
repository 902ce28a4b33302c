package fake

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ErrFakeSyncFailure is what FailNextSync(nil) arms.
var ErrFakeSyncFailure = errors.New("fake offsets: injected sync failure")

var _ ports.OffsetStore = (*Offsets)(nil)

// Offsets is an in-memory ports.OffsetStore with the file store's
// observable contract: one record per partition directory (topic name and
// partition), owned by the incarnation that first wrote it; a written record
// survives a process restart (the instance keeps it) and a synced one a
// machine crash (Crash); a directory of another incarnation loads as
// NoOffsets and is never written; an incarnation whose directories
// RemoveTopic deleted never writes again (the real store never recreates a
// directory). Safe for concurrent use.
type Offsets struct {
	*offData
	closed bool // guarded by mu
}

// offData is what survives Reopen.
type offData struct {
	mu       sync.Mutex
	dirs     map[offKey]*offDir
	retired  map[string]map[domain.TopicID]bool // topic -> incarnations removed
	failSync error
	writes   int
	syncs    int
	levels   int
}

type offKey struct {
	topic     string
	partition int32
}

type offDir struct {
	id      domain.TopicID
	cache   ports.ConsumerOffsets // newest Write (page cache)
	durable ports.ConsumerOffsets // newest synced record
	level   int64                 // consumer.offset, synced when levelled
}

// NewOffsets returns an empty store.
func NewOffsets() *Offsets {
	return &Offsets{offData: &offData{dirs: map[offKey]*offDir{}, retired: map[string]map[domain.TopicID]bool{}}}
}

func cloneOffsets(o ports.ConsumerOffsets) ports.ConsumerOffsets {
	return ports.ConsumerOffsets{Committed: o.Committed, AckedAhead: slices.Clone(o.AckedAhead)}
}

// dirLocked returns ref's directory, claiming a missing one for ref's
// incarnation when claim is set; nil when it belongs to another incarnation.
func (f *Offsets) dirLocked(ref domain.PartitionRef, claim bool) *offDir {
	k := offKey{ref.Topic, ref.Partition}
	d, ok := f.dirs[k]
	if !ok && claim && !f.retired[ref.Topic][ref.TopicID] {
		d = &offDir{id: ref.TopicID, cache: ports.NoOffsets, durable: ports.NoOffsets, level: -1}
		f.dirs[k] = d
	}
	if d == nil || (ref.TopicID != "" && d.id != ref.TopicID) {
		return nil
	}
	return d
}

// Load returns the newest written record, the larger frontier winning.
func (f *Offsets) Load(ref domain.PartitionRef) (ports.ConsumerOffsets, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.dirLocked(ref, false)
	if d == nil {
		return ports.NoOffsets, nil
	}
	out := cloneOffsets(d.cache)
	if d.level > out.Committed {
		out.Committed = d.level
	}
	kept := out.AckedAhead[:0]
	for _, o := range out.AckedAhead {
		if o > out.Committed {
			kept = append(kept, o)
		}
	}
	out.AckedAhead = kept
	return out, nil
}

// Write keeps a copy of o as ref's newest record.
func (f *Offsets) Write(ref domain.PartitionRef, o ports.ConsumerOffsets) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("fake offsets: %w", domain.ErrClosed)
	}
	if d := f.dirLocked(ref, true); d != nil {
		d.cache = cloneOffsets(o)
		f.writes++
	}
	return nil
}

// Sync makes ref's newest record durable, unless FailNextSync armed a failure.
func (f *Offsets) Sync(ref domain.PartitionRef) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.failSync; err != nil {
		f.failSync = nil
		return err
	}
	if d := f.dirLocked(ref, false); d != nil {
		d.durable = cloneOffsets(d.cache)
		f.syncs++
	}
	return nil
}

// Level records committed as ref's durable plain frontier.
func (f *Offsets) Level(ref domain.PartitionRef, committed int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d := f.dirLocked(ref, false); d != nil {
		d.level = committed
		f.levels++
	}
	return nil
}

// Forget has nothing to drop: the fake holds no descriptors.
func (f *Offsets) Forget(domain.PartitionRef) {}

// Close makes later writes fail with domain.ErrClosed.
func (f *Offsets) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// Crash returns what a machine crash would leave: every directory with its
// synced record only.
func (f *Offsets) Crash() *Offsets {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := NewOffsets()
	out.retired = f.retired
	for k, d := range f.dirs {
		out.dirs[k] = &offDir{id: d.id, cache: cloneOffsets(d.durable), durable: cloneOffsets(d.durable), level: d.level}
	}
	return out
}

// Reopen returns a store over the same records, as after a process restart
// (the page cache survives).
func (f *Offsets) Reopen() *Offsets {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &Offsets{offData: f.offData}
}

// RemoveTopic deletes the directories of incarnation id of topic, as a
// topic delete does; that incarnation can never write again.
func (f *Offsets) RemoveTopic(topic string, id domain.TopicID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.retired[topic] == nil {
		f.retired[topic] = map[domain.TopicID]bool{}
	}
	f.retired[topic][id] = true
	for k, d := range f.dirs {
		if k.topic == topic && d.id == id {
			delete(f.dirs, k)
		}
	}
}

// FailNextSync makes the next Sync fail with err (nil: ErrFakeSyncFailure).
func (f *Offsets) FailNextSync(err error) {
	if err == nil {
		err = ErrFakeSyncFailure
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failSync = err
}

// Counts reports how many writes, syncs and levels reached a directory.
func (f *Offsets) Counts() (writes, syncs, levels int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes, f.syncs, f.levels
}

// Durable returns ref's synced record (what a machine crash keeps).
func (f *Offsets) Durable(ref domain.PartitionRef) ports.ConsumerOffsets {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.dirLocked(ref, false)
	if d == nil {
		return ports.NoOffsets
	}
	out := cloneOffsets(d.durable)
	if d.level > out.Committed {
		out.Committed = d.level
	}
	return out
}
