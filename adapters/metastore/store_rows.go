package metastore

import "github.com/narad/narad/domain/meta"

// AllAssignments reads every assignment row, those of deleted topics
// included (the controller prunes them).
func (s *Store) AllAssignments() ([]meta.Assignment, error) {
	return readMany(s, meta.AllAssignments)
}
