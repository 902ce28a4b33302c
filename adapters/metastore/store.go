package metastore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lni/dragonboat/v4"
	"github.com/lni/dragonboat/v4/client"
	"github.com/lni/dragonboat/v4/config"
	sm "github.com/lni/dragonboat/v4/statemachine"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/metastore/metawatch"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

var (
	_ ports.MetadataStore      = (*Store)(nil)
	_ ports.MetadataMembership = (*Store)(nil)
)

// StoreConfig configures the metadata shard on a Host.
type StoreConfig struct {
	// InitialMembers maps node id → Raft address of a cluster bootstrapped
	// together. Empty: a fresh node bootstraps alone (unless Join). A fresh
	// node not in the list is join-only. Ignored once Raft state exists.
	InitialMembers map[string]string
	// Join makes a fresh node join-only: it waits for the leader to add it.
	Join bool
	// JoinAsVoter starts a join-only replica as a voter rather than a
	// non-voter: an initial member that found its peers configured
	// (bootstrap/probe.go, internals §9.2) is a voter of their
	// configuration already, and only a replica started as a voter
	// campaigns after replaying its own "add voter". Its role file still
	// says "non-voter" until a snapshot shows it a voter (role.go).
	JoinAsVoter bool
	// NonVoter starts the replica as a non-voter. A join-only replica, and
	// a joined one restarting before its promotion was snapshotted, starts
	// as one whatever this says (role.go).
	NonVoter bool
	// SnapshotEntries and CompactionOverhead tune log compaction (0 =
	// 8,192 and 1,024).
	SnapshotEntries    uint64
	CompactionOverhead uint64
	// JournalKeep is how many history entries to keep (0 = 10,000).
	JournalKeep int

	// beforeApply runs before every Update batch (tests make apply lag).
	beforeApply func()
}

// Store is the metadata shard of one node: a ports.MetadataStore over a
// dragonboat on-disk state machine on pebble. Safe for concurrent use.
type Store struct {
	host      *Host
	shardID   uint64
	replicaID uint64
	sm        *stateMachine
	session   *client.Session
	hub       metawatch.Hub
	views     viewCache
	log       *zap.Logger

	lastRead    atomic.Int64 // unix nanos of the last successful read probe
	joinOnly    bool         // started join-only: no Raft state, not in the initial members
	awaiting    atomic.Bool  // join-only and no leader seen yet
	probeCtx    context.Context
	cancelProbe context.CancelFunc
	probes      sync.WaitGroup
	stopOnce    sync.Once
}

// OpenMetadata starts the metadata shard on h (see planStart for how a
// replica bootstraps, joins or restarts) and its caught-up probe.
func (h *Host) OpenMetadata(cfg StoreConfig) (*Store, error) {
	plan, err := h.planStart(metadataShardID, cfg)
	if err != nil {
		return nil, err
	}
	s := &Store{
		host: h, shardID: metadataShardID, replicaID: meta.ReplicaID(h.cfg.NodeID),
		session: h.nh.GetNoOPSession(metadataShardID), log: h.log,
	}
	s.joinOnly = plan.join
	s.awaiting.Store(plan.join)
	if cfg.NonVoter, err = h.startAsNonVoter(plan, cfg); err != nil {
		return nil, err
	}
	s.probeCtx, s.cancelProbe = context.WithCancel(context.Background())
	keep := cfg.JournalKeep
	if keep <= 0 {
		keep = meta.JournalKeep
	}
	files := newDBFiles(filepath.Join(h.cfg.DataDir, "fsm", fmt.Sprintf("shard-%d", metadataShardID)), h.log)
	if err := h.guardOrphanState(files, plan); err != nil {
		return nil, err
	}
	s.sm = newStateMachine(files, h.log, keep, s.publish)
	s.sm.beforeApply = cfg.beforeApply
	if err := h.register(s); err != nil {
		return nil, err
	}
	create := func(uint64, uint64) sm.IOnDiskStateMachine { return s.sm }
	if err := h.nh.StartOnDiskReplica(plan.members, plan.join, create, s.raftConfig(cfg)); err != nil {
		return nil, fmt.Errorf("metastore: start metadata shard (%s): %w", plan.kind, err)
	}
	h.log.Info("metadata shard started", zap.String("plan", plan.kind), zap.Uint64("replica_id", s.replicaID))
	if err := s.waitOpen(); err != nil {
		return nil, err
	}
	s.probes.Add(1)
	go s.probeLoop(cfg.NonVoter || plan.join) // a joiner settles its role however it started
	return s, nil
}

// waitOpen returns once dragonboat opened the state machine, so local reads
// work as soon as OpenMetadata returns.
func (s *Store) waitOpen() error {
	t := time.NewTimer(openTimeout)
	defer t.Stop()
	select {
	case <-s.sm.opened:
		return nil
	case <-t.C:
		return fmt.Errorf("metastore: state machine did not open within %v: %w", openTimeout, meta.ErrUnavailable)
	}
}

func (s *Store) raftConfig(cfg StoreConfig) config.Config {
	c := config.Config{
		ShardID: s.shardID, ReplicaID: s.replicaID,
		ElectionRTT: electionRTTTicks, HeartbeatRTT: heartbeatRTTTicks,
		CheckQuorum: true, PreVote: true,
		SnapshotEntries: snapshotEntries, CompactionOverhead: compactionOverheadEntries,
		IsNonVoting: cfg.NonVoter,
	}
	if cfg.SnapshotEntries > 0 {
		c.SnapshotEntries = cfg.SnapshotEntries
	}
	if cfg.CompactionOverhead > 0 {
		c.CompactionOverhead = cfg.CompactionOverhead
	}
	return c
}

func (s *Store) publish(changes []ports.MetaChange) {
	for _, c := range changes {
		s.hub.Publish(c)
	}
}

// stop ends the probe and the watchers; the Host stops Raft.
func (s *Store) stop() {
	s.stopOnce.Do(func() {
		s.cancelProbe()
		s.probes.Wait()
		s.hub.Close(meta.ErrStopped)
	})
}

// ReplicaID is this node's replica id in the metadata shard.
func (s *Store) ReplicaID() uint64 { return s.replicaID }

// Propose validates, encodes and replicates env, and returns once this
// node's replica applied it (dragonboat completes a proposal when the
// proposing replica applies the entry, follower or leader).
func (s *Store) Propose(ctx context.Context, env meta.Envelope) (ports.MetaApplied, error) {
	if env.Event == nil {
		return ports.MetaApplied{}, fmt.Errorf("metastore: propose: nil event: %w", meta.ErrInvalidEvent)
	}
	if err := env.Event.Validate(); err != nil {
		return ports.MetaApplied{}, fmt.Errorf("metastore: propose %s: %w", env.Event.Type(), err)
	}
	cmd, err := meta.Encode(env)
	if err != nil {
		return ports.MetaApplied{}, fmt.Errorf("metastore: propose: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	for {
		res, err := s.host.nh.SyncPropose(ctx, s.session, cmd)
		if err == nil {
			return decodeResult(res)
		}
		notTaken := errors.Is(err, dragonboat.ErrShardNotReady) || errors.Is(err, dragonboat.ErrSystemBusy)
		if !notTaken || !pause(ctx, retryPause) {
			return ports.MetaApplied{}, raftErr("propose "+env.Event.Type().String(), err)
		}
	}
}

// raftErr maps a dragonboat error onto the port's sentinels, keeping it.
func raftErr(op string, err error) error {
	kind := meta.ErrUnavailable
	switch {
	case errors.Is(err, dragonboat.ErrClosed), errors.Is(err, dragonboat.ErrShardClosed):
		kind = meta.ErrStopped
	case errors.Is(err, dragonboat.ErrRejected):
		kind = meta.ErrRefused
	}
	return fmt.Errorf("metastore: %s: %w (%w)", op, kind, err)
}

// Barrier is a linearizable read: it returns once local apply covers every
// entry committed before the call. A read lost to a leadership change is
// retried within the 5 s budget.
func (s *Store) Barrier(ctx context.Context) error {
	err := retryRead(ctx, barrierTimeout, func(ctx context.Context) error {
		_, err := s.host.nh.SyncRead(ctx, s.shardID, barrierQuery{})
		return err
	})
	if err != nil {
		return raftErr("barrier", err)
	}
	s.lastRead.Store(time.Now().UnixNano())
	return nil
}

// retryRead runs a linearizable read, attempt after attempt (each bounded by
// readAttemptTimeout), until it succeeds, fails for good, or budget or ctx
// runs out: a read lost to a leadership change is simply asked again.
func retryRead(ctx context.Context, budget time.Duration, read func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, readAttemptTimeout)
		err := read(attempt)
		cancelAttempt()
		if err == nil || !retryable(err) || !pause(ctx, retryPause) {
			return err
		}
	}
}

// retryable reports whether a request surely did not take effect and may be
// sent again (reads always may; proposals only when dropped unaccepted).
func retryable(err error) bool {
	return !errors.Is(err, dragonboat.ErrClosed) && !errors.Is(err, dragonboat.ErrShardClosed) &&
		!errors.Is(err, dragonboat.ErrRejected) && !errors.Is(err, dragonboat.ErrCanceled)
}

// pause waits d, or returns false when ctx ends first.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// probeLoop runs a barrier every second; CaughtUp trusts the last success
// for 5 s. A replica started as a non-voter also settles its role there.
func (s *Store) probeLoop(nonVoter bool) {
	defer s.probes.Done()
	tick := time.NewTicker(probeInterval)
	defer tick.Stop()
	for {
		select {
		case <-s.probeCtx.Done():
			return
		case <-tick.C:
			_ = s.Barrier(s.probeCtx) // a failure lets the last success age out
			if nonVoter {
				nonVoter = !s.settleRole(s.probeCtx)
			}
		}
	}
}

// CaughtUp: a leader is known and a linearizable read succeeded within 5 s.
func (s *Store) CaughtUp() bool {
	if _, ok := s.Leader(); !ok {
		return false
	}
	last := s.lastRead.Load()
	return last != 0 && time.Since(time.Unix(0, last)) <= leaderContactMax
}

// JoinOnly reports whether this replica started join-only: fresh (no Raft
// state) and not an initial member, so a leader must add it (internals
// §9.2, §9.3).
func (s *Store) JoinOnly() bool { return s.joinOnly }

// Admitted reports whether this replica belongs to a Raft configuration:
// false only while a join-only replica has not yet seen a leader (it sees
// one once the leader added it and replicated to it). Once true it stays
// true for the life of the process.
func (s *Store) Admitted() bool {
	if !s.awaiting.Load() {
		return true
	}
	if _, ok := s.Leader(); ok {
		s.awaiting.Store(false)
		return true
	}
	return false
}

// IsLeader reports whether this replica leads the shard.
func (s *Store) IsLeader() bool {
	id, ok := s.Leader()
	return ok && id == s.replicaID
}

// LeaderSince reports since when this replica has led the shard; false
// while it does not lead.
func (s *Store) LeaderSince() (time.Time, bool) {
	if !s.IsLeader() {
		return time.Time{}, false
	}
	return s.host.tenures.since(s.shardID, s.replicaID)
}

// RaftLink reports when this node's Raft transport last failed to connect
// to the peer at raftAddr and when it last connected (zero when never).
func (s *Store) RaftLink(raftAddr string) (failed, connected time.Time) {
	return s.host.links.get(raftAddr)
}

// Leader returns the leader's replica id as known locally.
func (s *Store) Leader() (uint64, bool) {
	id, _, valid, err := s.host.nh.GetLeaderID(s.shardID)
	return id, err == nil && valid && id != 0
}

// AppliedIndex is the newest entry index the state machine applied.
func (s *Store) AppliedIndex() uint64 { return s.sm.applied.Load() }

// Versions implements ports.MetadataFreshness.
func (s *Store) Versions() meta.Versions { return s.sm.viewVersions() }

// NewestTypeApplied is the newest entry type this replica's database ever
// applied (its fsm_meta record): the join gate refuses a joiner that applies
// less (internals §8.3 "Joining").
func (s *Store) NewestTypeApplied() meta.EntryType { return s.sm.newestTypeApplied() }

// Watch subscribes to applied entries (and snapshot installs).
func (s *Store) Watch(buffer int) (ports.MetaSubscription, error) { return s.hub.Subscribe(buffer) }
