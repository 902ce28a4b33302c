package controller_test

import (
	"testing"
	"time"

	"github.com/narad/narad/domain/meta"
)

// Ensure that a member silent for more than 30 s is marked dead, carrying
// the heartbeat judged, while one that beat recently and the leader itself
// stay alive (internals §9.4).
func TestSilentMemberMarkedDead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2", "n3")
	f.tick(t) // the term starts at startTime
	f.clock.Advance(25 * time.Second)
	f.heartbeat(t, "n2")
	f.clock.Advance(6 * time.Second) // 31 s: n3 silent past 30 s, n2 for 6 s
	f.tick(t)
	if got := f.status(t, "n3"); got != meta.StatusDead {
		t.Fatalf("n3 is %s after 31 s of silence", got)
	}
	for _, id := range []string{"n1", "n2"} {
		if got := f.status(t, id); got != meta.StatusAlive {
			t.Fatalf("%s is %s", id, got)
		}
	}
	marks := events[*meta.MarkMemberDeadIf](f.store)
	if len(marks) != 1 || marks[0].ID != "n3" || marks[0].Heartbeat != startTime.Unix() {
		t.Fatalf("dead marks %+v, want one for n3 carrying heartbeat %d", marks, startTime.Unix())
	}
	if f.ctl.DeadMarkingRefused() {
		t.Fatal("breaker flag set without a refusal")
	}
}

// Ensure that after a 45 s leaderless stretch a new leader marks nobody
// dead within 30 s of its election, and then only the members still
// silent (story F23: leader-clock grace per term).
func TestElectionGraceAfterLeaderlessStretch(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2", "n3")
	f.store.SetLeader(false)
	f.clock.Advance(45 * time.Second) // no leader: no heartbeat got through
	f.store.SetLeader(true)
	f.tick(t) // elected: every stamp is 45 s old
	f.clock.Advance(time.Second)
	f.heartbeat(t, "n2") // held-back heartbeats resume
	for range 2 {
		f.clock.Advance(14 * time.Second) // 15 s then 29 s into the term
		f.tick(t)
		if marks := events[*meta.MarkMemberDeadIf](f.store); len(marks) != 0 {
			t.Fatalf("dead marks within the grace: %+v", marks)
		}
	}
	f.clock.Advance(2 * time.Second) // 31 s into the term
	f.tick(t)
	if got := f.status(t, "n2"); got != meta.StatusAlive {
		t.Fatalf("n2 beat 30 s ago and is %s", got)
	}
	if got := f.status(t, "n3"); got != meta.StatusDead {
		t.Fatalf("n3 silent for 76 s is %s after the grace", got)
	}
}

// Ensure that losing and regaining leadership starts a new grace.
func TestGraceRestartsEveryTerm(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2", "n3")
	f.tick(t)
	f.clock.Advance(40 * time.Second)
	f.store.SetLeader(false)
	_ = f.ctl.CheckMembership(t.Context()) // the watch sees the term end
	f.store.SetLeader(true)
	f.tick(t) // a new term: its grace starts now
	if marks := events[*meta.MarkMemberDeadIf](f.store); len(marks) != 0 {
		t.Fatalf("dead marks at the start of a new term: %+v", marks)
	}
}

// Ensure that a heartbeat landing between the controller's read and its
// dead mark wins: the mark carries the stamp judged and the state machine
// refuses it (type 31), so the member stays alive.
func TestDeadMarkLosesToNewerHeartbeat(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2")
	f.tick(t)
	f.clock.Advance(31 * time.Second)
	f.store.before = func(env meta.Envelope) {
		if _, ok := env.Event.(*meta.MarkMemberDeadIf); ok {
			f.heartbeat(t, "n2")
		}
	}
	f.tick(t)
	if marks := events[*meta.MarkMemberDeadIf](f.store); len(marks) != 1 {
		t.Fatalf("dead marks proposed: %+v", marks)
	}
	if got := f.status(t, "n2"); got != meta.StatusAlive {
		t.Fatalf("n2 beat before the mark applied and is %s", got)
	}
}

// Ensure that the breaker refuses a verdict that would leave fewer than a
// quorum of voters alive (the leader counted), raises its flag, still
// judges non-voters, and clears once a verdict keeps quorum (internals
// §8.7, story F23).
func TestBreakerRefusesVoterQuorumLoss(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2", "n3", "n4")
	f.voters(t, "n1", "n2", "n3")
	f.tick(t)
	f.clock.Advance(31 * time.Second)
	f.tick(t)
	if !f.ctl.DeadMarkingRefused() {
		t.Fatal("breaker did not raise its flag")
	}
	for _, id := range []string{"n2", "n3"} {
		if got := f.status(t, id); got != meta.StatusAlive {
			t.Fatalf("voter %s is %s despite the breaker", id, got)
		}
	}
	if got := f.status(t, "n4"); got != meta.StatusDead {
		t.Fatalf("non-voter n4 is %s; non-voters are judged normally", got)
	}
	f.heartbeat(t, "n2")
	f.clock.Advance(10 * time.Second)
	f.tick(t) // verdict {n3}: n1 and n2 stay, a quorum of 3
	if f.ctl.DeadMarkingRefused() {
		t.Fatal("breaker flag still up after a verdict that keeps quorum")
	}
	if got := f.status(t, "n3"); got != meta.StatusDead {
		t.Fatalf("voter n3 is %s once quorum holds", got)
	}
}
