package fake

import "github.com/narad/narad/domain/meta"

// AllAssignments reads every assignment row, those of deleted topics
// included (the controller's orphan pruning scans them).
func (s *MetaStore) AllAssignments() ([]meta.Assignment, error) {
	return read(s, meta.AllAssignments)
}
