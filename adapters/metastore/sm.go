package metastore

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	sm "github.com/lni/dragonboat/v4/statemachine"
	"go.uber.org/zap"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// barrierQuery is the Lookup query of a linearizable read: it answers the
// applied index.
type barrierQuery struct{}

var _ sm.IOnDiskStateMachine = (*stateMachine)(nil)

// stateMachine is the metadata shard's dragonboat IOnDiskStateMachine over a
// pebble database. Each Update batch writes its views, its history, the
// applied index and the newest entry type applied in one synced pebble
// batch, so a restart resumes exactly after the newest applied entry and
// never applies an entry twice (F26).
type stateMachine struct {
	files *dbFiles
	log   *zap.Logger
	keep  int // journal entries kept

	mu sync.RWMutex // guards db against the swap in RecoverFromSnapshot
	db *pebble.DB

	applied atomic.Uint64
	// newest is the newest entry type applied (the fsm_meta record).
	newest atomic.Uint32
	// versions are the per-view counters (meta.View), moved after each
	// committed batch that changed a view's rows and by every restore.
	versions atomic.Pointer[meta.Versions]
	opened   chan struct{} // closed once Open succeeded
	// restores counts snapshot installs (a streamed snapshot replaced the
	// database).
	restores atomic.Int64
	saves    sync.WaitGroup // snapshots being streamed; Close waits for them

	// publish receives the changes of a committed batch; restored is called
	// after a snapshot install.
	publish func([]ports.MetaChange)
	// beforeApply, when set, runs before each Update (tests delay apply).
	beforeApply func()
	// disk retries failed batch commits (internals §8.3 fail-stop (b)).
	disk diskRetry
}

func newStateMachine(files *dbFiles, log *zap.Logger, keep int, publish func([]ports.MetaChange)) *stateMachine {
	s := &stateMachine{files: files, log: log, keep: keep, publish: publish, opened: make(chan struct{}),
		disk: newDiskRetry()}
	s.versions.Store(&meta.Versions{})
	return s
}

// viewVersions returns the per-view counters as of the last committed batch.
func (s *stateMachine) viewVersions() meta.Versions { return *s.versions.Load() }

// bumpViews moves the counters of views (one writer: apply and restore).
func (s *stateMachine) bumpViews(views meta.Views) {
	if views != 0 {
		v := s.versions.Load().Bump(views)
		s.versions.Store(&v)
	}
}

// Open opens (or creates) the current database and returns its applied index
// so dragonboat replays only the entries after it. A database that applied
// an entry type this build does not know is refused (ErrNewerDatabase).
func (s *stateMachine) Open(stopc <-chan struct{}) (uint64, error) {
	db, err := s.files.openCurrent()
	if err != nil {
		return 0, err
	}
	m, err := readSMMeta(kvReader{db})
	if err != nil {
		db.Close()
		s.log.Error("metadata state machine refused", zap.String("dir", s.files.current()), zap.Error(err))
		return 0, err
	}
	s.mu.Lock()
	s.db = db
	s.mu.Unlock()
	s.applied.Store(m.applied)
	s.newest.Store(uint32(m.newest))
	close(s.opened)
	s.log.Info("metadata state machine opened", zap.Uint64("applied_index", m.applied),
		zap.Uint8("newest_entry_type", uint8(m.newest)), zap.String("dir", s.files.current()))
	return m.applied, nil
}

// newestTypeApplied is the newest entry type this database ever applied.
func (s *stateMachine) newestTypeApplied() meta.EntryType { return meta.EntryType(s.newest.Load()) }

// Update applies a batch of committed entries in one synced pebble batch.
// An entry this build cannot apply stops the batch with
// ErrEntryNotApplicable: nothing of the batch is written, and dragonboat
// halts the process.
func (s *stateMachine) Update(entries []sm.Entry) ([]sm.Entry, error) {
	if s.beforeApply != nil {
		s.beforeApply()
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	batch := s.db.NewIndexedBatch()
	defer batch.Close()
	changes := make([]ports.MetaChange, 0, len(entries))
	rec := smMeta{applied: s.applied.Load(), newest: s.newestTypeApplied()}
	var views meta.Views
	for i := range entries {
		e := &entries[i]
		if e.Index <= rec.applied {
			continue // already held: replay skips it
		}
		change, changed, err := s.applyOne(batch, e)
		if err != nil {
			return nil, s.halt(e, err)
		}
		views |= changed
		changes = append(changes, change)
		rec.applied = e.Index
		rec.newest = max(rec.newest, change.Envelope.Event.Type())
	}
	if len(changes) == 0 {
		return entries, nil
	}
	if err := s.commit(batch, rec); err != nil {
		return nil, s.halt(&entries[len(entries)-1], err)
	}
	s.applied.Store(rec.applied)
	s.newest.Store(uint32(rec.newest))
	s.bumpViews(views)
	if s.publish != nil {
		s.publish(changes)
	}
	return entries, nil
}

// applyOne decodes and applies e into batch, sets its result and reports
// the views its writes changed.
func (s *stateMachine) applyOne(batch *pebble.Batch, e *sm.Entry) (ports.MetaChange, meta.Views, error) {
	env, err := meta.Decode(e.Cmd)
	if err != nil {
		return ports.MetaChange{}, 0, err
	}
	res, muts, err := meta.Step(kvReader{batch}, e.Index, env, s.keep)
	if err != nil {
		return ports.MetaChange{}, 0, err
	}
	views, err := meta.ViewsChanged(kvReader{batch}, muts)
	if err != nil {
		return ports.MetaChange{}, 0, err
	}
	if err := meta.WriteMutations(batchWriter{batch}, muts); err != nil {
		return ports.MetaChange{}, 0, err
	}
	e.Result = encodeResult(e.Index, res)
	return ports.MetaChange{Index: e.Index, Envelope: env, Result: res}, views, nil
}

// commit records rec in batch and commits it synced, retrying a disk that
// refuses the write (see diskRetry) before giving up.
func (s *stateMachine) commit(batch *pebble.Batch, rec smMeta) error {
	moved := rec.newest != s.newestTypeApplied()
	if err := writeSMMeta(batch, rec, moved); err != nil {
		return err
	}
	return s.disk.commit(s.db, batch, s.log)
}

// halt logs the entry that stops this replica and returns the fatal error.
func (s *stateMachine) halt(e *sm.Entry, cause error) error {
	typ := byte(0)
	if len(e.Cmd) > 1 {
		typ = e.Cmd[1]
	}
	err := fmt.Errorf("%w: index %d, entry type %d (%s), this build applies through %d: %w",
		ErrEntryNotApplicable, e.Index, typ, meta.EntryType(typ), meta.AppliesThroughType, cause)
	s.log.Error("metadata entry cannot be applied; stopping", zap.Uint64("index", e.Index),
		zap.Uint8("entry_type", typ), zap.Error(err))
	return err
}

// encodeResult packs an outcome into dragonboat's result: Value = index,
// Data = code byte + detail.
func encodeResult(index uint64, r meta.Result) sm.Result {
	data := make([]byte, 0, 1+len(r.Detail))
	data = append(data, byte(r.Code))
	return sm.Result{Value: index, Data: append(data, r.Detail...)}
}

func decodeResult(r sm.Result) (ports.MetaApplied, error) {
	if len(r.Data) == 0 {
		return ports.MetaApplied{}, errors.New("metastore: empty proposal result")
	}
	return ports.MetaApplied{Index: r.Value, Result: meta.Result{Code: meta.Code(r.Data[0]), Detail: string(r.Data[1:])}}, nil
}

// Lookup answers linearizable reads: the applied index for a barrier.
func (s *stateMachine) Lookup(q any) (any, error) {
	if _, ok := q.(barrierQuery); ok {
		return s.applied.Load(), nil
	}
	return nil, fmt.Errorf("metastore: unknown lookup %T", q)
}

// Sync has nothing to do: every Update batch is synced.
func (s *stateMachine) Sync() error { return nil }

// read runs f over the current database under the read lock.
func (s *stateMachine) read(f func(meta.KVReader) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.db == nil {
		return fmt.Errorf("metastore: state machine not open: %w", meta.ErrUnavailable)
	}
	return f(kvReader{s.db})
}

// Close closes the database once no snapshot is being streamed from it.
func (s *stateMachine) Close() error {
	s.saves.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil
	}
	err := s.db.Close()
	s.db = nil
	return err
}
