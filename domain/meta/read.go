package meta

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// The read functions below serve every local view. They work on any
// KVReader: the pebble state machine, a pebble snapshot, MemKV, or an entry's
// overlay during apply.

func getJSON[T any](r KVReader, key []byte) (T, bool, error) {
	var v T
	b, ok, err := r.Get(key)
	if err != nil || !ok {
		return v, false, err
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return v, false, fmt.Errorf("read %q: %v: %w", key, err, ErrCorruptView)
	}
	return v, true, nil
}

// scanJSON decodes every record under prefix whose key sorts after
// prefix+after, up to limit (0 = no limit).
func scanJSON[T any](r KVReader, prefix []byte, after string, limit int) ([]T, error) {
	lower := prefix
	if after != "" {
		lower = append(append(bytes.Clone(prefix), after...), 0)
	}
	var out []T
	err := r.Scan(lower, prefixEnd(prefix), func(k, v []byte) (bool, error) {
		var rec T
		if err := json.Unmarshal(v, &rec); err != nil {
			return false, fmt.Errorf("read %q: %v: %w", k, err, ErrCorruptView)
		}
		out = append(out, rec)
		return limit <= 0 || len(out) < limit, nil
	})
	return out, err
}

// ReadTopic returns the topic named name.
func ReadTopic(r KVReader, name string) (Topic, bool, error) {
	return getJSON[Topic](r, topicKey(name))
}

// ListTopics returns up to limit topics whose names sort after after
// (keyset paging), ordered by name. limit 0 returns them all.
func ListTopics(r KVReader, after string, limit int) ([]Topic, error) {
	return scanJSON[Topic](r, []byte(prefixTopic), after, limit)
}

// Schemas returns the topic's schema history, oldest first.
func Schemas(r KVReader, topic string) ([]SchemaVersion, error) {
	return scanJSON[SchemaVersion](r, schemaPrefix(topic), "", 0)
}

// LatestSchema returns the topic's newest schema version.
func LatestSchema(r KVReader, topic string) (SchemaVersion, bool, error) {
	all, err := Schemas(r, topic)
	if err != nil || len(all) == 0 {
		return SchemaVersion{}, false, err
	}
	return all[len(all)-1], true, nil
}

// Assignments returns the topic's assignment rows by partition.
func Assignments(r KVReader, topic string) ([]Assignment, error) {
	return scanJSON[Assignment](r, assignPrefix(topic), "", 0)
}

// ReadAssignment returns one partition's row.
func ReadAssignment(r KVReader, topic string, partition int32) (Assignment, bool, error) {
	return getJSON[Assignment](r, assignKey(topic, partition))
}

// AllAssignments returns every row, by topic then partition.
func AllAssignments(r KVReader) ([]Assignment, error) {
	return scanJSON[Assignment](r, []byte(prefixAssign), "", 0)
}

// Moves returns every assignment with a move target, by topic then partition.
func Moves(r KVReader) ([]Move, error) {
	rows, err := AllAssignments(r)
	if err != nil {
		return nil, err
	}
	var out []Move
	for _, a := range rows {
		if a.Target != "" {
			out = append(out, Move{Topic: a.Topic, TopicID: a.TopicID, Partition: a.Partition, From: a.Owner, To: a.Target})
		}
	}
	return out, nil
}

// Members returns every member record by id.
func Members(r KVReader) ([]Member, error) {
	return scanJSON[Member](r, []byte(prefixMember), "", 0)
}

// ReadMember returns the member with id.
func ReadMember(r KVReader, id string) (Member, bool, error) {
	return getJSON[Member](r, memberKey(id))
}

// Tombstones returns every decommission tombstone by id.
func Tombstones(r KVReader) ([]Tombstone, error) {
	return scanJSON[Tombstone](r, []byte(prefixTomb), "", 0)
}

// Users returns every user by username.
func Users(r KVReader) ([]User, error) {
	return scanJSON[User](r, []byte(prefixUser), "", 0)
}

// ReadUser returns the user named name.
func ReadUser(r KVReader, name string) (User, bool, error) {
	return getJSON[User](r, userKey(name))
}

// Links returns every fan-out link, by child name.
func Links(r KVReader) ([]Link, error) {
	topics, err := ListTopics(r, "", 0)
	if err != nil {
		return nil, err
	}
	var out []Link
	for _, t := range topics {
		if t.Parent != "" {
			out = append(out, Link{Parent: t.Parent, Child: t.Name, Epoch: t.AttachEpoch, DelayMs: t.FanoutDelayMs,
				AttachOffsets: t.AttachOffsets, Remote: t.Remote})
		}
	}
	return out, nil
}

// Remotes returns every remote by name.
func Remotes(r KVReader) ([]Remote, error) {
	return scanJSON[Remote](r, []byte(prefixRemote), "", 0)
}

// ReadRemote returns the remote named name.
func ReadRemote(r KVReader, name string) (Remote, bool, error) {
	return getJSON[Remote](r, remoteKey(name))
}

// RemoteSalt returns the cluster's salt for remote credentials (internals.md
// §7.6), minted by the first remote create; found=false before it.
func RemoteSalt(r KVReader) ([]byte, bool, error) {
	v, found, err := r.Get([]byte(keyRemoteSalt))
	if err != nil || !found {
		return nil, false, err
	}
	return append([]byte(nil), v...), true, nil
}

// RemoteKeySeals returns how many passwords key version keyVersion has
// sealed (internals.md §7.6, the seal cap): every applied create, password
// change and re-encrypt under it counts once, deletes do not give seals
// back. 0 for a key that never sealed.
func RemoteKeySeals(r KVReader, keyVersion string) (int64, error) {
	b, found, err := r.Get(sealsKey(keyVersion))
	if err != nil || !found {
		return 0, err
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read %q = %q: %v: %w", sealsKey(keyVersion), b, err, ErrCorruptView)
	}
	return n, nil
}
