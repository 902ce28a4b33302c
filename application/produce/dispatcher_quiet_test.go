package produce_test

import (
	"testing"
	"time"
)

// Ensure that a dispatcher with nothing owed sleeps without its 10 ms
// backstop (an idle node pays no wake-ups for it) and that a record made
// durable later still wakes it at once.
func TestIdleDispatcherSleepsUntilARecordArrives(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 1)
	e.assign(t, "t", self)
	e.run(t)
	e.produce(t, "t", "", "a")
	waitFor(t, "the first commit checkpointed and the loop asleep", func() bool {
		return e.wal.Checkpoint() == 1 && e.running.Sleeping()
	})
	seen := e.turns.turns.Load()
	// An observation window of five backstop intervals (not a
	// synchronization): a loop that kept its backstop turns about five times.
	time.Sleep(50 * time.Millisecond)
	if turns := e.turns.turns.Load() - seen; turns > 1 {
		t.Fatalf("the idle dispatcher turned %d times in 50 ms", turns)
	}
	e.produce(t, "t", "", "b")
	waitFor(t, "the second commit", func() bool { return e.wal.Checkpoint() == 2 })
}
