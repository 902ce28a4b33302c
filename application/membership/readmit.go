package membership

import (
	"context"
	"fmt"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// readmit decides a join under an id decommission removed (internals
// §9.5). The member tombstone keeps an old incarnation from undoing its
// decommission, so a join carrying it is refused (ErrRemoved, 409) unless
// it declares an empty data directory: that is a deliberate re-add, and
// the tombstone is cleared (ReadmitMember, type 20) before the join goes on
// to be admitted as new.
//
// Raft's own record of a removed replica id is the limit: dragonboat never
// takes a removed replica id back, and a node's replica id is derived from
// its node id (meta.ReplicaID), so an id whose replica was removed (the
// decommission's RemoveServer, a forget) stays refused even with an empty
// data directory, and its tombstone is left in place: clearing it would
// readmit nothing. Coming back under such an id needs a replica id that
// is not derived from the node id alone.
func (a *Admitter) readmit(ctx context.Context, j Join, id uint64, m ports.RaftMembership) error {
	tombstoned, err := a.tombstoned(j.NodeID)
	if err != nil {
		return err
	}
	_, removed := m.Removed[id]
	switch {
	case !tombstoned && !removed:
		return nil
	case removed:
		return fmt.Errorf("join %q: Raft removed its replica id %d for good (empty data directory: %v): %w",
			j.NodeID, id, j.DataDirEmpty, ErrRemoved)
	case !j.DataDirEmpty:
		return fmt.Errorf("join %q: the id was decommissioned; only a node starting from an empty data directory may take it again: %w",
			j.NodeID, ErrRemoved)
	}
	ev := &meta.ReadmitMember{ID: j.NodeID}
	applied, err := a.store.Propose(ctx, meta.Envelope{Actor: "join:" + j.NodeID, AtMs: a.now().UnixMilli(), Event: ev})
	if err != nil {
		return fmt.Errorf("membership: readmit %q: %w", j.NodeID, err)
	}
	if !applied.Result.OK() && applied.Result.Code != meta.CodeNotFound { // not found: cleared already
		return fmt.Errorf("membership: readmit %q: %w", j.NodeID, applied.Result.Err())
	}
	return nil
}

// tombstoned reports whether id carries a decommission tombstone.
func (a *Admitter) tombstoned(id string) (bool, error) {
	tombs, err := a.store.Tombstones()
	if err != nil {
		return false, fmt.Errorf("membership: read tombstones: %w", err)
	}
	for _, t := range tombs {
		if t.ID == id {
			return true, nil
		}
	}
	return false, nil
}
