package meta_test

import (
	"testing"

	"github.com/narad/narad/domain/meta"
)

// Ensure that only alive, non-draining members are candidates, sorted by id.
func TestPlacementCandidates(t *testing.T) {
	t.Parallel()
	got := meta.PlacementCandidates([]meta.Member{
		{ID: "n3", Status: meta.StatusAlive},
		{ID: "n1", Status: meta.StatusAlive},
		{ID: "n2", Status: meta.StatusDead},
		{ID: "n4", Status: meta.StatusAlive, Draining: true},
		{ID: "n0", Status: meta.StatusAlive},
	})
	want := []string{"n0", "n1", "n3"}
	if len(got) != len(want) {
		t.Fatalf("candidates %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("candidates %v, want %v", got, want)
		}
	}
}

// Ensure that partition p goes to candidate p mod n, that a child partition
// avoids its parent partition's owner (internals §6.6), that a single
// candidate accepts co-location and that an unplaced parent partition or no
// candidate defers.
func TestPlaceOwner(t *testing.T) {
	t.Parallel()
	three := []string{"a", "b", "c"}
	parent := &meta.ParentPlacement{Partitions: 3, Owners: map[int32]string{0: "a", 1: "c"}}
	cases := []struct {
		name   string
		cands  []string
		p      int32
		parent *meta.ParentPlacement
		want   string
		ok     bool
	}{
		{"round_robin_0", three, 0, nil, "a", true},
		{"round_robin_4", three, 4, nil, "b", true},
		{"child_avoids_parent_owner", three, 0, parent, "b", true},
		{"child_keeps_rule_when_apart", three, 1, parent, "b", true},
		{"child_defers_on_unplaced_parent", three, 2, parent, "", false},
		{"child_beyond_parent_count", three, 5, parent, "c", true},
		{"single_candidate_colocates", []string{"a"}, 0, parent, "a", true},
		{"no_candidate", nil, 0, nil, "", false},
		{"negative_partition", three, -1, nil, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, ok := meta.PlaceOwner(c.cands, c.p, c.parent)
			if got != c.want || ok != c.ok {
				t.Fatalf("PlaceOwner = %q, %v; want %q, %v", got, ok, c.want, c.ok)
			}
		})
	}
}
