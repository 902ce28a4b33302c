package metastore

import (
	"context"
	"errors"
	"fmt"

	"github.com/lni/dragonboat/v4"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Local reads: straight from this replica's pebble database, no Raft.

func readMany[T any](s *Store, f func(meta.KVReader) (T, error)) (T, error) {
	var out T
	err := s.sm.read(func(r meta.KVReader) error {
		var err error
		out, err = f(r)
		return err
	})
	return out, err
}

func readOne[T any](s *Store, f func(meta.KVReader) (T, bool, error)) (T, bool, error) {
	var out T
	var ok bool
	err := s.sm.read(func(r meta.KVReader) error {
		var err error
		out, ok, err = f(r)
		return err
	})
	return out, ok, err
}

// Topic reads a topic view (cached until the next applied entry).
func (s *Store) Topic(name string) (meta.Topic, bool, error) {
	index := s.sm.applied.Load()
	if v, ok := s.views.topic(index, name); ok {
		return v.t, v.ok, nil
	}
	t, ok, err := readOne(s, func(r meta.KVReader) (meta.Topic, bool, error) { return meta.ReadTopic(r, name) })
	if err == nil {
		s.views.putTopic(index, name, cachedTopic{t: t, ok: ok})
	}
	return t, ok, err
}

// ListTopics pages topics by name.
func (s *Store) ListTopics(after string, limit int) ([]meta.Topic, error) {
	return readMany(s, func(r meta.KVReader) ([]meta.Topic, error) { return meta.ListTopics(r, after, limit) })
}

// Schemas reads a topic's schema history.
func (s *Store) Schemas(topic string) ([]meta.SchemaVersion, error) {
	return readMany(s, func(r meta.KVReader) ([]meta.SchemaVersion, error) { return meta.Schemas(r, topic) })
}

// Links reads every fan-out link.
func (s *Store) Links() ([]meta.Link, error) { return readMany(s, meta.Links) }

// Assignments reads a topic's rows (cached until the next applied entry).
func (s *Store) Assignments(topic string) ([]meta.Assignment, error) {
	index := s.sm.applied.Load()
	if rows, ok := s.views.topicAssignments(index, topic); ok {
		return rows, nil
	}
	rows, err := readMany(s, func(r meta.KVReader) ([]meta.Assignment, error) { return meta.Assignments(r, topic) })
	if err == nil {
		s.views.putTopicAssignments(index, topic, rows)
	}
	return rows, err
}

// EachAssignment walks the topic's rows as Assignments reads them, from
// the cached list itself (cached lists are replaced, never changed).
func (s *Store) EachAssignment(topic string, visit func(meta.Assignment)) error {
	rows, ok := s.views.sharedTopicAssignments(s.sm.applied.Load(), topic)
	if !ok {
		var err error
		if rows, err = s.Assignments(topic); err != nil {
			return err
		}
	}
	for _, a := range rows {
		visit(a)
	}
	return nil
}

// Assignment reads one row (cached until the next applied entry).
func (s *Store) Assignment(topic string, partition int32) (meta.Assignment, bool, error) {
	index, key := s.sm.applied.Load(), assignKey{topic: topic, partition: partition}
	if v, ok := s.views.assignment(index, key); ok {
		return v.a, v.ok, nil
	}
	a, ok, err := readOne(s, func(r meta.KVReader) (meta.Assignment, bool, error) {
		return meta.ReadAssignment(r, topic, partition)
	})
	if err == nil {
		s.views.putAssignment(index, key, cachedAssignment{a: a, ok: ok})
	}
	return a, ok, err
}

// Moves reads every move in flight.
func (s *Store) Moves() ([]meta.Move, error) { return readMany(s, meta.Moves) }

// Members reads every member record.
func (s *Store) Members() ([]meta.Member, error) {
	index := s.sm.applied.Load()
	if ms, ok := s.views.memberTable(index); ok {
		return ms, nil
	}
	ms, err := readMany(s, meta.Members)
	if err == nil {
		s.views.putMembers(index, ms)
	}
	return ms, err
}

// Tombstones reads the decommissioned ids.
func (s *Store) Tombstones() ([]meta.Tombstone, error) { return readMany(s, meta.Tombstones) }

// User reads one account.
func (s *Store) User(name string) (meta.User, bool, error) {
	return readOne(s, func(r meta.KVReader) (meta.User, bool, error) { return meta.ReadUser(r, name) })
}

// Users reads every account.
func (s *Store) Users() ([]meta.User, error) { return readMany(s, meta.Users) }

// Remotes reads every remote.
func (s *Store) Remotes() ([]meta.Remote, error) { return readMany(s, meta.Remotes) }

// RemoteSalt reads the cluster's salt for remote credentials.
func (s *Store) RemoteSalt() ([]byte, bool, error) { return readOne(s, meta.RemoteSalt) }

// RemoteKeySeals reads how many passwords a key version has sealed.
func (s *Store) RemoteKeySeals(keyVersion string) (int64, error) {
	return readMany(s, func(r meta.KVReader) (int64, error) { return meta.RemoteKeySeals(r, keyVersion) })
}

// History reads the journal, newest first.
func (s *Store) History(before uint64, limit int) ([]meta.JournalEntry, error) {
	return readMany(s, func(r meta.KVReader) ([]meta.JournalEntry, error) { return meta.Journal(r, before, limit) })
}

// Describe prints every view of this replica (see meta.Describe).
func (s *Store) Describe() (string, error) { return readMany(s, meta.Describe) }

// Membership reads the shard's Raft configuration (linearizable).
func (s *Store) Membership(ctx context.Context) (ports.RaftMembership, error) {
	var m *dragonboat.Membership
	err := retryRead(ctx, membershipTimeout, func(ctx context.Context) error {
		var err error
		m, err = s.host.nh.SyncGetShardMembership(ctx, s.shardID)
		return err
	})
	if err != nil {
		return ports.RaftMembership{}, raftErr("membership", err)
	}
	return ports.RaftMembership{Voters: m.Nodes, NonVoters: m.NonVotings, Removed: m.Removed}, nil
}

// AddNonVoter stages replicaID at addr.
func (s *Store) AddNonVoter(ctx context.Context, replicaID uint64, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, membershipTimeout)
	defer cancel()
	if err := changeRetrying(ctx, func(ctx context.Context) error {
		return s.host.nh.SyncRequestAddNonVoting(ctx, s.shardID, replicaID, addr, 0)
	}); err != nil {
		return raftErr(fmt.Sprintf("add non-voter %d", replicaID), err)
	}
	return nil
}

// AddVoter adds replicaID as a voter, or promotes the non-voter.
func (s *Store) AddVoter(ctx context.Context, replicaID uint64, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, membershipTimeout)
	defer cancel()
	if err := changeRetrying(ctx, func(ctx context.Context) error {
		return s.host.nh.SyncRequestAddReplica(ctx, s.shardID, replicaID, addr, 0)
	}); err != nil {
		return raftErr(fmt.Sprintf("add voter %d", replicaID), err)
	}
	return nil
}

// RemoveReplica removes replicaID from the shard for good.
func (s *Store) RemoveReplica(ctx context.Context, replicaID uint64) error {
	ctx, cancel := context.WithTimeout(ctx, membershipTimeout)
	defer cancel()
	if err := changeRetrying(ctx, func(ctx context.Context) error {
		return s.host.nh.SyncRequestDeleteReplica(ctx, s.shardID, replicaID, 0)
	}); err != nil {
		return raftErr(fmt.Sprintf("remove replica %d", replicaID), err)
	}
	return nil
}

// changeRetrying runs a configuration change, asking again only when it was
// dropped before Raft took it (a timed-out change may have applied).
func changeRetrying(ctx context.Context, change func(context.Context) error) error {
	for {
		err := change(ctx)
		dropped := errors.Is(err, dragonboat.ErrShardNotReady) || errors.Is(err, dragonboat.ErrSystemBusy)
		if !dropped || !pause(ctx, retryPause) {
			return err
		}
	}
}
