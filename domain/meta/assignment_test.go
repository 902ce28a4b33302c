package meta

import "testing"

// ensure that a row belongs to the incarnation it names, a row without an
// id to any incarnation of the name, and a row of another id to none.
func TestAssignmentBelongsTo(t *testing.T) {
	for _, tc := range []struct {
		row, id string
		want    bool
	}{{"a1", "a1", true}, {"", "a1", true}, {"a0", "a1", false}} {
		if got := (Assignment{TopicID: tc.row}).BelongsTo(tc.id); got != tc.want {
			t.Errorf("row %q BelongsTo(%q) = %v, want %v", tc.row, tc.id, got, tc.want)
		}
	}
}
