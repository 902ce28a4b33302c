package segmentlog

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ErrInvalidOptions reports Options that Open refuses.
var ErrInvalidOptions = errors.New("segmentlog: invalid options")

var _ ports.PartitionLogs = (*Store)(nil)

// Options configure a Store. FS and DataDir are required.
type Options struct {
	FS      vfs.FS
	DataDir string // partition data lives under DataDir/topics
	Codec   Codec  // codec of new frames (storage.codec)
	Level   Level  // zstd level (storage.compression_level)
	// IdleEviction closes a log nobody used for this long: 0 disables it,
	// otherwise at least one minute. DefaultOptions sets 30 minutes.
	IdleEviction time.Duration
	// EvictScanInterval and ReapInterval pace the eviction scan and the
	// retention sweep; 0 means one minute.
	EvictScanInterval time.Duration
	ReapInterval      time.Duration
	// Now is the clock for commit times, retention and eviction; nil is
	// time.Now.
	Now func() time.Time
	// Logger receives errors the store handles itself; nil discards them.
	Logger *slog.Logger
	// SegmentMaxBytes caps segments; 0 means 64 MiB. Tests use less.
	SegmentMaxBytes int64
	// Observer receives flush, fsync, hwm, retention and error
	// measurements; nil observes nothing.
	Observer Observer
	// VerifySide checks a whole side file a move carries (a fan-out
	// cursor, the consumer position) by its name; nil checks none. A
	// source re-reads one that fails (caught mid-write) before refusing
	// to ship it, and a destination drops a staged one that fails.
	VerifySide func(name string, b []byte) error

	hooks *testHooks
}

// testHooks let in-package tests reach inside the write and sweep paths.
type testHooks struct {
	readBack func(raw []byte) // sees (and may damage) every commit's read-back
	sweep    func(dir string) // runs at the start of each log's sweep
}

// DefaultOptions returns the production defaults for a data directory.
func DefaultOptions(fsys vfs.FS, dataDir string) Options {
	return Options{FS: fsys, DataDir: dataDir, IdleEviction: idleEvictionDefault}
}

func (o Options) normalized() (Options, error) {
	switch {
	case o.FS == nil:
		return o, fmt.Errorf("nil FS: %w", ErrInvalidOptions)
	case o.DataDir == "":
		return o, fmt.Errorf("empty DataDir: %w", ErrInvalidOptions)
	case o.IdleEviction < 0 || (o.IdleEviction > 0 && o.IdleEviction < idleEvictionFloor):
		return o, fmt.Errorf("IdleEviction %v (0 or at least %v): %w", o.IdleEviction, idleEvictionFloor, ErrInvalidOptions)
	case o.EvictScanInterval < 0 || o.ReapInterval < 0 || o.SegmentMaxBytes < 0:
		return o, fmt.Errorf("negative interval or size: %w", ErrInvalidOptions)
	}
	o.DataDir = filepath.Clean(o.DataDir)
	if o.EvictScanInterval == 0 {
		o.EvictScanInterval = evictScanIntervalDefault
	}
	if o.ReapInterval == 0 {
		o.ReapInterval = reapIntervalDefault
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.SegmentMaxBytes == 0 {
		o.SegmentMaxBytes = segmentSizeMaxBytes
	}
	if o.Observer == nil {
		o.Observer = nopObserver{}
	}
	return o, nil
}

// Store owns every partition log under DataDir/topics: a map of logs opened
// lazily, the incarnation markers, one retention reaper and one idle-eviction
// scanner. Safe for concurrent use.
//
// Lock order: a partition's produce lock, then its topic's guard, then the
// map lock. Opening, closing and the incarnation check run under the topic
// guard, never under the map lock.
type Store struct {
	opts      Options
	topicsDir string
	codecs    *codecSet
	stats     counters

	mu     sync.Mutex // the map lock
	slots  map[partKey]*slot
	topics map[string]*topicState
	sched  schedIndex // the slots holding scheduled records

	watchers watchers // OnChange's functions, shared with every slot

	closed atomic.Bool
	stop   chan struct{}
	wg     sync.WaitGroup
}

type partKey struct {
	topic     string
	partition int32
}

// slot is one partition name's place in the map. It outlives the logs opened
// in it: the produce lock, the commit-time floor and the waiters' channel
// carry over an eviction and a reopen.
type slot struct {
	key     partKey
	topic   *topicState
	dir     string
	produce sync.Mutex // one writer per partition (G8)
	freeze  freeze     // a move's freeze: commits refused while it holds
	log     atomic.Pointer[partitionLog]
	lastUse atomic.Int64 // Unix nanoseconds of the last real get
	floor   atomic.Int64 // newest commit time handed out, in ms
	// closedStats caches LogStats of the closed log (statsClosed reads the
	// directory: at thousands of partitions, every scrape paid seconds of
	// syscalls). Anything that changes the directory or opens or closes the
	// log broadcasts, which drops it.
	closedStats atomic.Pointer[ports.LogStats]

	wakeMu   sync.Mutex
	wake     chan struct{}
	watchers *watchers // the store's OnChange functions

	sched schedState // scheduled records (schedule.go)
}

// changed returns the channel the next advance or close will close.
func (s *slot) changed() <-chan struct{} {
	s.wakeMu.Lock()
	defer s.wakeMu.Unlock()
	if s.wake == nil {
		s.wake = make(chan struct{})
	}
	return s.wake
}

// broadcast wakes every waiter, tells the OnChange functions and drops the
// cached closed-log stats; when nobody fetched the channel, nothing is
// cached and nothing registered, it costs three atomic loads and a lock.
func (s *slot) broadcast() {
	if s.closedStats.Load() != nil {
		s.closedStats.Store(nil)
	}
	s.wakeMu.Lock()
	if s.wake != nil {
		close(s.wake)
		s.wake = nil
	}
	s.wakeMu.Unlock()
	s.watchers.notify(s.key.topic)
}

// topicState is what the store knows of one topic name.
type topicState struct {
	name      string
	dir       string
	guard     sync.Mutex                     // serialises this topic's opens, closes and incarnation changes
	known     bool                           // the marker was read (guard)
	retired   map[domain.TopicID]bool        // incarnations quarantined here (guard)
	id        atomic.Pointer[domain.TopicID] // the incarnation the directory belongs to, once known
	retention atomic.Int64                   // nanoseconds
	slots     map[int32]*slot                // map lock
}

// serves reports, without locks, whether id may use the open logs.
func (t *topicState) serves(id domain.TopicID) bool {
	cur := t.id.Load()
	return cur != nil && (id == "" || id == *cur)
}

// Open returns a Store over opts.DataDir and starts its retention reaper and
// its eviction scanner. Logs open lazily on first use.
func Open(opts Options) (*Store, error) {
	opts, err := opts.normalized()
	if err != nil {
		return nil, err
	}
	codecs, err := newCodecSet(opts.Codec, opts.Level)
	if err != nil {
		return nil, err
	}
	s := &Store{
		opts:      opts,
		topicsDir: filepath.Join(opts.DataDir, topicsDirName),
		codecs:    codecs,
		slots:     map[partKey]*slot{},
		topics:    map[string]*topicState{},
		stop:      make(chan struct{}),
	}
	if err := ensureDir(opts.FS, s.topicsDir); err != nil {
		return nil, fmt.Errorf("segmentlog: open %s: %w", opts.DataDir, err)
	}
	s.wg.Add(2)
	go s.every(s.opts.ReapInterval, s.reapOnce)
	go s.every(s.opts.EvictScanInterval, s.evictOnce)
	return s, nil
}

// topic returns the state of a topic name, creating it.
func (s *Store) topic(name string) *topicState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.topicLocked(name)
}

func (s *Store) topicLocked(name string) *topicState {
	t, ok := s.topics[name]
	if !ok {
		t = &topicState{name: name, dir: filepath.Join(s.topicsDir, name), retired: map[domain.TopicID]bool{}, slots: map[int32]*slot{}}
		s.topics[name] = t
	}
	return t
}

// slotFor returns ref's slot, creating it. Slots are never dropped, so two
// callers can never hold different produce locks for one partition.
func (s *Store) slotFor(ref domain.PartitionRef) *slot {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := partKey{ref.Topic, ref.Partition}
	if sl, ok := s.slots[key]; ok {
		return sl
	}
	t := s.topicLocked(ref.Topic)
	sl := &slot{key: key, topic: t, dir: filepath.Join(t.dir, partitionDirName(ref.Partition)), watchers: &s.watchers}
	s.slots[key] = sl
	t.slots[ref.Partition] = sl
	return sl
}

// openSlots returns every slot holding an open log.
func (s *Store) openSlots() []*slot {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*slot
	for _, sl := range s.slots {
		if sl.log.Load() != nil {
			out = append(out, sl)
		}
	}
	return out
}

// Close stops the background loops and closes every log, each under its
// produce lock, writing each exact high watermark. Later calls answer
// domain.ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	close(s.stop)
	s.wg.Wait()
	s.mu.Lock()
	all := make([]*slot, 0, len(s.slots))
	for _, sl := range s.slots {
		all = append(all, sl)
	}
	s.mu.Unlock()
	var errs []error
	for _, sl := range all {
		sl.produce.Lock()
		sl.topic.guard.Lock()
		if l := sl.log.Swap(nil); l != nil {
			errs = append(errs, l.close(true))
		}
		s.schedForget(sl)
		sl.topic.guard.Unlock()
		sl.produce.Unlock()
		sl.broadcast()
	}
	s.codecs.close()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("segmentlog: close: %w", err)
	}
	return nil
}

// errStoreClosed matches both domain.ErrClosed and domain.ErrLogClosed:
// a reader treats it as the transient "log closed".
var errStoreClosed = fmt.Errorf("segmentlog: store closed: %w: %w", domain.ErrClosed, domain.ErrLogClosed)

// Stats is a snapshot of the store's counters.
type Stats struct {
	OpenLogs              int
	LogsEvicted           int64
	FsyncPoisoned         int64
	ReaperPanics          int64
	RetentionUnlinkErrors int64
	SegmentsDeleted       int64
	BytesDeleted          int64
	MessagesDeleted       int64
}

type counters struct {
	logsEvicted, fsyncPoisoned, reaperPanics, retentionUnlinkErrors atomic.Int64
	segmentsDeleted, bytesDeleted, messagesDeleted                  atomic.Int64
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	return Stats{
		OpenLogs:              len(s.openSlots()),
		LogsEvicted:           s.stats.logsEvicted.Load(),
		FsyncPoisoned:         s.stats.fsyncPoisoned.Load(),
		ReaperPanics:          s.stats.reaperPanics.Load(),
		RetentionUnlinkErrors: s.stats.retentionUnlinkErrors.Load(),
		SegmentsDeleted:       s.stats.segmentsDeleted.Load(),
		BytesDeleted:          s.stats.bytesDeleted.Load(),
		MessagesDeleted:       s.stats.messagesDeleted.Load(),
	}
}
