package meta

import "slices"

// The placement rule (internals §8.7 and §6.6): one decision function for
// topic creates, partition growth and the controller's assignment sweep.
// Alive, non-draining members sorted by id are the candidates; partition p
// goes to candidate p mod n. A fan-out child's partition p below its
// parent's partition count is anti-affine: walk the candidates from p mod n
// and take the first that does not own parent partition p (a single
// candidate accepts co-location); an unplaced parent partition defers it.

// ParentPlacement is what the anti-affine rule needs from a child's parent:
// its partition count and the owner of each placed partition.
type ParentPlacement struct {
	Partitions int32
	Owners     map[int32]string
}

// PlacementCandidates returns the ids of alive, non-draining members,
// sorted. The slice is the caller's.
func PlacementCandidates(members []Member) []string {
	var ids []string
	for _, m := range members {
		if m.Status == StatusAlive && !m.Draining {
			ids = append(ids, m.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// PlaceOwner picks the owner of partition p among candidates (sorted, as
// PlacementCandidates returns them). parent is nil for a topic that is not
// a fan-out child. ok is false when nothing can be decided now: no
// candidate, or the parent partition p is not placed yet.
func PlaceOwner(candidates []string, p int32, parent *ParentPlacement) (owner string, ok bool) {
	n := len(candidates)
	if n == 0 || p < 0 {
		return "", false
	}
	start := int(p) % n
	if parent == nil || p >= parent.Partitions {
		return candidates[start], true
	}
	avoid, placed := parent.Owners[p]
	if !placed {
		return "", false
	}
	for i := range n {
		if c := candidates[(start+i)%n]; c != avoid {
			return c, true
		}
	}
	return candidates[start], true
}
