package porttest

import (
	"testing"

	"github.com/narad/narad/ports"
)

// ensure that OnChange's function hears, on the committing goroutine, of
// every commit with its topic's name and of a Remove, and hears nothing once
// stopped.
func plOnChange(t *testing.T, pl ports.PartitionLogs) {
	heard := make(chan string, 64)
	stop := pl.OnChange(func(topic string) { heard <- topic })
	watched, other := plRef("watched", plID1, 0), plRef("other", plID1, 1)
	plCommit(t, pl, watched, plRecords(30, 2))
	plHeard(t, heard, "watched", "a commit")
	plCommit(t, pl, other, plRecords(31, 1))
	plHeard(t, heard, "other", "a commit of another topic")
	if err := pl.Remove(watched); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	plHeard(t, heard, "watched", "a Remove")
	stop()
	plCommit(t, pl, other, plRecords(32, 1))
	if len(heard) != 0 {
		t.Fatalf("heard %q after stop", <-heard)
	}
}

// plHeard checks that the change was reported by the time the call making
// it returned, at least once and for no other topic.
func plHeard(t *testing.T, heard chan string, topic, what string) {
	t.Helper()
	if len(heard) == 0 {
		t.Fatalf("%s of %q was not reported before the call returned", what, topic)
	}
	for len(heard) > 0 {
		if got := <-heard; got != topic {
			t.Fatalf("%s of %q reported %q", what, topic, got)
		}
	}
}
