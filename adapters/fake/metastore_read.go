package fake

import "github.com/narad/narad/domain/meta"

// read runs f over the applied views under the lock.
func read[T any](s *MetaStore, f func(meta.KVReader) (T, error)) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return f(s.kv)
}

func readOne[T any](s *MetaStore, f func(meta.KVReader) (T, bool, error)) (T, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return f(s.kv)
}

// Topic reads a topic view.
func (s *MetaStore) Topic(name string) (meta.Topic, bool, error) {
	return readOne(s, func(r meta.KVReader) (meta.Topic, bool, error) { return meta.ReadTopic(r, name) })
}

// ListTopics pages topics by name.
func (s *MetaStore) ListTopics(after string, limit int) ([]meta.Topic, error) {
	return read(s, func(r meta.KVReader) ([]meta.Topic, error) { return meta.ListTopics(r, after, limit) })
}

// Schemas reads a topic's schema history.
func (s *MetaStore) Schemas(topic string) ([]meta.SchemaVersion, error) {
	return read(s, func(r meta.KVReader) ([]meta.SchemaVersion, error) { return meta.Schemas(r, topic) })
}

// Links reads every fan-out link.
func (s *MetaStore) Links() ([]meta.Link, error) { return read(s, meta.Links) }

// Assignments reads a topic's rows.
func (s *MetaStore) Assignments(topic string) ([]meta.Assignment, error) {
	return read(s, func(r meta.KVReader) ([]meta.Assignment, error) { return meta.Assignments(r, topic) })
}

// EachAssignment walks a topic's rows.
func (s *MetaStore) EachAssignment(topic string, visit func(meta.Assignment)) error {
	rows, err := s.Assignments(topic)
	if err != nil {
		return err
	}
	for _, a := range rows {
		visit(a)
	}
	return nil
}

// Assignment reads one row.
func (s *MetaStore) Assignment(topic string, partition int32) (meta.Assignment, bool, error) {
	return readOne(s, func(r meta.KVReader) (meta.Assignment, bool, error) {
		return meta.ReadAssignment(r, topic, partition)
	})
}

// Moves reads every move in flight.
func (s *MetaStore) Moves() ([]meta.Move, error) { return read(s, meta.Moves) }

// Members reads every member record.
func (s *MetaStore) Members() ([]meta.Member, error) { return read(s, meta.Members) }

// Tombstones reads the decommissioned ids.
func (s *MetaStore) Tombstones() ([]meta.Tombstone, error) { return read(s, meta.Tombstones) }

// User reads one account.
func (s *MetaStore) User(name string) (meta.User, bool, error) {
	return readOne(s, func(r meta.KVReader) (meta.User, bool, error) { return meta.ReadUser(r, name) })
}

// Users reads every account.
func (s *MetaStore) Users() ([]meta.User, error) { return read(s, meta.Users) }

// Remotes reads every remote.
func (s *MetaStore) Remotes() ([]meta.Remote, error) { return read(s, meta.Remotes) }

// RemoteSalt reads the cluster's salt for remote credentials.
func (s *MetaStore) RemoteSalt() ([]byte, bool, error) { return readOne(s, meta.RemoteSalt) }

// History reads the journal, newest first.
func (s *MetaStore) History(before uint64, limit int) ([]meta.JournalEntry, error) {
	return read(s, func(r meta.KVReader) ([]meta.JournalEntry, error) { return meta.Journal(r, before, limit) })
}
