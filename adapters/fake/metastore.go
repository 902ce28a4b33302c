package fake

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/narad/narad/adapters/metastore/metawatch"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// metaBarrierTimeout bounds a fake Barrier like the real one (5 s).
const metaBarrierTimeout = 5 * time.Second

var (
	_ ports.MetadataStore      = (*MetaStore)(nil)
	_ ports.MetadataMembership = (*MetaStore)(nil)
)

// MetaStore is an in-memory ports.MetadataStore: one replica whose "log" is a
// slice. Entries apply through meta.Step, the same rules the pebble state
// machine runs. Knobs let a test make the replica lag (HoldApply, Commit),
// lose freshness (SetCaughtUp), lose leadership (SetLeader), fail barriers
// (FailBarrier) or writes (FailPropose). Safe for concurrent use.
type MetaStore struct {
	mu         sync.Mutex
	kv         *meta.MemKV
	log        []meta.Envelope // log[i] is the entry at index i+1
	applied    uint64
	newest     meta.EntryType // newest entry type applied
	versions   meta.Versions  // per-view counters, as the pebble replica keeps them
	results    map[uint64]meta.Result
	changed    chan struct{} // closed and replaced at every apply
	hold       bool
	caughtUp   bool
	leader     bool
	ledSince   time.Time               // what LeaderSince answers while leading
	links      map[string][2]time.Time // RaftLink answers: failed, connected
	self       uint64                  // this replica's id (SetReplicaID; 1 by default)
	handover   handover                // TransferLeadership knobs and calls
	barrierErr error
	proposeErr error
	memberErr  error
	closed     bool
	membership ports.RaftMembership
	hub        metawatch.Hub
}

// NewMetaStore returns an empty replica that leads, is caught up and
// applies at once.
func NewMetaStore() *MetaStore {
	return &MetaStore{
		kv: meta.NewMemKV(), results: make(map[uint64]meta.Result), changed: make(chan struct{}),
		caughtUp: true, leader: true, self: 1,
		membership: ports.RaftMembership{Voters: map[uint64]string{}, NonVoters: map[uint64]string{}, Removed: map[uint64]struct{}{}},
	}
}

// Propose appends env to the log and waits until this replica applied it.
func (s *MetaStore) Propose(ctx context.Context, env meta.Envelope) (ports.MetaApplied, error) {
	if env.Event == nil {
		return ports.MetaApplied{}, fmt.Errorf("fake metastore: propose: nil event: %w", meta.ErrInvalidEvent)
	}
	if err := env.Event.Validate(); err != nil {
		return ports.MetaApplied{}, fmt.Errorf("fake metastore: propose %s: %w", env.Event.Type(), err)
	}
	s.mu.Lock()
	if err := s.writableLocked(); err != nil {
		s.mu.Unlock()
		return ports.MetaApplied{}, err
	}
	index, err := s.commitLocked(env)
	s.mu.Unlock()
	if err != nil {
		return ports.MetaApplied{}, err
	}
	if err := s.waitApplied(ctx, index); err != nil {
		return ports.MetaApplied{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return ports.MetaApplied{Index: index, Result: s.results[index]}, nil
}

func (s *MetaStore) writableLocked() error {
	switch {
	case s.closed:
		return fmt.Errorf("fake metastore: %w", meta.ErrStopped)
	case s.proposeErr != nil:
		return s.proposeErr
	}
	return nil
}

// Commit appends env as if another node had proposed it: it applies at once
// unless HoldApply is on. It returns the entry's index.
func (s *MetaStore) Commit(env meta.Envelope) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commitLocked(env)
}

func (s *MetaStore) commitLocked(env meta.Envelope) (uint64, error) {
	s.log = append(s.log, env)
	index := uint64(len(s.log))
	if !s.hold {
		return index, s.applyPendingLocked()
	}
	return index, nil
}

// applyPendingLocked applies every committed entry not applied yet.
func (s *MetaStore) applyPendingLocked() error {
	for s.applied < uint64(len(s.log)) {
		index := s.applied + 1
		env := s.log[index-1]
		res, ms, err := meta.Step(s.kv, index, env, meta.JournalKeep)
		if err != nil {
			return fmt.Errorf("fake metastore: apply %d: %w", index, err)
		}
		views, err := meta.ViewsChanged(s.kv, ms)
		if err != nil {
			return fmt.Errorf("fake metastore: apply %d: %w", index, err)
		}
		s.versions = s.versions.Bump(views)
		if err := meta.WriteMutations(s.kv, ms); err != nil {
			return fmt.Errorf("fake metastore: apply %d: %w", index, err)
		}
		s.applied, s.results[index] = index, res
		if env.Event != nil {
			s.newest = max(s.newest, env.Event.Type())
		}
		s.hub.Publish(ports.MetaChange{Index: index, Envelope: env, Result: res})
	}
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

// waitApplied blocks until index is applied, ctx ends or the store closes.
func (s *MetaStore) waitApplied(ctx context.Context, index uint64) error {
	for {
		s.mu.Lock()
		applied, changed, closed := s.applied, s.changed, s.closed
		s.mu.Unlock()
		switch {
		case applied >= index:
			return nil
		case closed:
			return fmt.Errorf("fake metastore: %w", meta.ErrStopped)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("fake metastore: waiting for index %d: %w (%w)", index, meta.ErrUnavailable, ctx.Err())
		}
	}
}

// HoldApply makes later entries commit without applying: the replica lags.
func (s *MetaStore) HoldApply() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = true
}

// ReleaseApply applies every held entry and stops holding.
func (s *MetaStore) ReleaseApply() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = false
	return s.applyPendingLocked()
}

// SetCaughtUp sets what CaughtUp answers.
func (s *MetaStore) SetCaughtUp(v bool) { s.set(func() { s.caughtUp = v }) }

// SetLeader sets what IsLeader answers.
func (s *MetaStore) SetLeader(v bool) { s.set(func() { s.leader = v }) }

// FailBarrier makes Barrier return err (nil restores normal barriers).
func (s *MetaStore) FailBarrier(err error) { s.set(func() { s.barrierErr = err }) }

// FailPropose makes Propose return err (nil restores normal proposals).
func (s *MetaStore) FailPropose(err error) { s.set(func() { s.proposeErr = err }) }

// FailMembership makes membership changes return err (nil restores them).
func (s *MetaStore) FailMembership(err error) { s.set(func() { s.memberErr = err }) }

func (s *MetaStore) set(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

// Close stops the replica: writes and barriers fail with meta.ErrStopped,
// watchers end.
func (s *MetaStore) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.changed)
		s.changed = make(chan struct{})
		s.hub.Close(meta.ErrStopped)
	}
}

// AppliedIndex is the newest applied index.
func (s *MetaStore) AppliedIndex() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applied
}

// Versions are the per-view counters of what has applied.
func (s *MetaStore) Versions() meta.Versions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.versions
}

// NewestTypeApplied is the newest entry type this replica applied.
func (s *MetaStore) NewestTypeApplied() meta.EntryType {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newest
}

// CaughtUp answers the SetCaughtUp knob, and false while entries are held.
func (s *MetaStore) CaughtUp() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caughtUp && !s.closed && s.applied == uint64(len(s.log))
}

// Barrier waits until every entry committed before the call is applied,
// within 5 s or ctx.
func (s *MetaStore) Barrier(ctx context.Context) error {
	s.mu.Lock()
	target, err := uint64(len(s.log)), s.barrierErr
	if s.closed {
		err = fmt.Errorf("fake metastore: %w", meta.ErrStopped)
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, metaBarrierTimeout)
	defer cancel()
	return s.waitApplied(ctx, target)
}

// IsLeader answers the SetLeader knob.
func (s *MetaStore) IsLeader() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leader && !s.closed
}

// SetLeaderSince sets the tenure LeaderSince reports while this replica
// leads (the zero time by default: it has led since forever).
func (s *MetaStore) SetLeaderSince(t time.Time) { s.set(func() { s.ledSince = t }) }

// LeaderSince reports the SetLeaderSince tenure while leading.
func (s *MetaStore) LeaderSince() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ledSince, s.leader && !s.closed
}

// SetRaftLink sets what RaftLink answers for raftAddr.
func (s *MetaStore) SetRaftLink(raftAddr string, failed, connected time.Time) {
	s.set(func() {
		if s.links == nil {
			s.links = map[string][2]time.Time{}
		}
		s.links[raftAddr] = [2]time.Time{failed, connected}
	})
}

// RaftLink answers the SetRaftLink knob (zero times by default: no event).
func (s *MetaStore) RaftLink(raftAddr string) (failed, connected time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.links[raftAddr]
	return l[0], l[1]
}

// Leader reports this replica (ReplicaID) when it leads, unknown otherwise.
func (s *MetaStore) Leader() (uint64, bool) {
	if s.IsLeader() {
		return s.ReplicaID(), true
	}
	return 0, false
}

// Watch subscribes to applied entries.
func (s *MetaStore) Watch(buffer int) (ports.MetaSubscription, error) {
	return s.hub.Subscribe(buffer)
}

// Membership returns a copy of the configuration.
func (s *MetaStore) Membership(context.Context) (ports.RaftMembership, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.membership
	return ports.RaftMembership{Voters: maps.Clone(m.Voters), NonVoters: maps.Clone(m.NonVoters), Removed: maps.Clone(m.Removed)}, nil
}

// AddNonVoter stages replicaID.
func (s *MetaStore) AddNonVoter(_ context.Context, replicaID uint64, addr string) error {
	return s.changeMembership(replicaID, func(m *ports.RaftMembership) {
		if _, voter := m.Voters[replicaID]; !voter {
			m.NonVoters[replicaID] = addr
		}
	})
}

// AddVoter adds or promotes replicaID.
func (s *MetaStore) AddVoter(_ context.Context, replicaID uint64, addr string) error {
	return s.changeMembership(replicaID, func(m *ports.RaftMembership) {
		delete(m.NonVoters, replicaID)
		m.Voters[replicaID] = addr
	})
}

// RemoveReplica removes replicaID for good.
func (s *MetaStore) RemoveReplica(_ context.Context, replicaID uint64) error {
	return s.changeMembership(replicaID, func(m *ports.RaftMembership) {
		delete(m.Voters, replicaID)
		delete(m.NonVoters, replicaID)
		m.Removed[replicaID] = struct{}{}
	})
}

func (s *MetaStore) changeMembership(replicaID uint64, change func(*ports.RaftMembership)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return fmt.Errorf("fake metastore: %w", meta.ErrStopped)
	case s.memberErr != nil:
		return s.memberErr
	case !s.leader:
		return fmt.Errorf("fake metastore: membership change on a follower: %w", meta.ErrUnavailable)
	}
	if _, gone := s.membership.Removed[replicaID]; gone {
		return fmt.Errorf("fake metastore: replica %d was removed: %w", replicaID, meta.ErrRefused)
	}
	change(&s.membership)
	return nil
}
