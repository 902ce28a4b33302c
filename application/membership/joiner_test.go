package membership_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// Ensure that an attempt follows a 421's leader hint at once, remembers
// the leader, and asks it first on the next attempt (internals §9.3).
func TestJoinerFollowsTheLeaderHint(t *testing.T) {
	t.Parallel()
	send := newSender().on("p1:7942", hint("l:7942")).on("l:7942", admitted(ports.JoinStaged))
	r := newJoinRig(t, send, "p1:7942", "p2:7942")
	a, err := r.j.Attempt(context.Background())
	if err != nil || a.Status != ports.JoinStaged {
		t.Fatalf("attempt: %+v, %v", a, err)
	}
	if got := send.calls(); !reflect.DeepEqual(got, []string{"p1:7942", "l:7942"}) {
		t.Fatalf("asked %v", got)
	}
	if send.request != joinReq("n4") {
		t.Fatalf("sent %+v", send.request)
	}
	if _, err := r.j.Attempt(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := send.calls(); !reflect.DeepEqual(got, []string{"l:7942"}) {
		t.Fatalf("second attempt asked %v, want the remembered leader alone", got)
	}
}

// Ensure that one attempt follows at most 4 hints, then moves on to the
// next peer; a hint loop asks each address once.
func TestJoinerFollowsAtMostFourHintsPerAttempt(t *testing.T) {
	t.Parallel()
	send := newSender().on("p1:1", hint("h1:1")).on("p2:1", admitted(ports.JoinStaged))
	for i := 1; i <= 5; i++ {
		send.on(fmt.Sprintf("h%d:1", i), hint(fmt.Sprintf("h%d:1", i+1)))
	}
	r := newJoinRig(t, send, "p1:1", "p2:1")
	if a, err := r.j.Attempt(context.Background()); err != nil || a.Status != ports.JoinStaged {
		t.Fatalf("attempt: %+v, %v", a, err)
	}
	want := []string{"p1:1", "h1:1", "h2:1", "h3:1", "h4:1", "p2:1"}
	if got := send.calls(); !reflect.DeepEqual(got, want) {
		t.Fatalf("asked %v, want %v", got, want)
	}

	loop := newSender().on("a:1", hint("b:1")).on("b:1", hint("a:1"))
	r = newJoinRig(t, loop, "a:1")
	_, err := r.j.Attempt(context.Background())
	if got := loop.calls(); !reflect.DeepEqual(got, []string{"a:1", "b:1"}) || !errors.Is(err, domain.ErrNotMetaLeader) {
		t.Fatalf("hint loop: asked %v, %v", got, err)
	}
}

// Ensure that a hint is followed only when it is host:port within 261
// bytes with a host and a non-zero port.
func TestJoinerFollowsOnlyValidHints(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 257) + ".b:12" // 262 bytes
	cases := map[string]bool{
		"":                false,
		"no-port":         false,
		":7942":           false,
		"h:0":             false,
		"h:65536":         false,
		"h:port":          false,
		long:              false,
		long[1:]:          true, // 261 bytes
		"10.0.0.9:7942":   true,
		"[fd00::9]:7942":  true,
		"narad-2.narad:1": true,
	}
	for addr, follow := range cases {
		send := newSender().on("p:1", hint(addr))
		r := newJoinRig(t, send, "p:1")
		_, _ = r.j.Attempt(context.Background())
		got := send.calls()
		if followed := len(got) == 2 && got[1] == addr; followed != follow {
			t.Errorf("hint %q (%d bytes): asked %v, want followed=%v", addr, len(addr), got, follow)
		}
		if remembered := len(r.j.Leaders()) == 1; remembered != follow {
			t.Errorf("hint %q: remembered %v", addr, r.j.Leaders())
		}
	}
}

// Ensure that at most 8 leader addresses are remembered, most recent
// first, and asked before the configured peers.
func TestJoinerRemembersEightLeadersMostRecentFirst(t *testing.T) {
	t.Parallel()
	send := newSender()
	r := newJoinRig(t, send, "p:1")
	for i := 1; i <= 10; i++ {
		send.on("p:1", hint(fmt.Sprintf("l%d:1", i)))
		_, _ = r.j.Attempt(context.Background())
	}
	send.calls()
	want := []string{"l10:1", "l9:1", "l8:1", "l7:1", "l6:1", "l5:1", "l4:1", "l3:1"}
	if got := r.j.Leaders(); !reflect.DeepEqual(got, want) {
		t.Fatalf("remembered %v, want %v", got, want)
	}
	send.on("p:1") // unreachable now: the attempt walks everything once
	_, _ = r.j.Attempt(context.Background())
	if got := send.calls(); !reflect.DeepEqual(got, append(want, "p:1")) {
		t.Fatalf("asked %v", got)
	}
}

// Ensure that a 409 ends the attempt (the leader's refusal stands), is
// logged once at error however often it repeats, and logged again only
// after an admission.
func TestJoinerLogsARefusalOnce(t *testing.T) {
	t.Parallel()
	send := newSender().on("p1:1", answer{err: fmt.Errorf("x: %w", domain.ErrOlderRelease)})
	r := newJoinRig(t, send, "p1:1", "p2:1")
	for range 3 {
		if r.j.Step(context.Background()) {
			t.Fatal("a refused join ended the loop")
		}
	}
	if got := send.calls(); !reflect.DeepEqual(got, []string{"p1:1", "p1:1", "p1:1"}) {
		t.Fatalf("asked %v: a refusal must end the attempt", got)
	}
	if n := r.logs.count("level=ERROR"); n != 1 {
		t.Fatalf("logged the refusal %d times:\n%s", n, r.logs.b.String())
	}
	send.on("p1:1", admitted(ports.JoinStaged), answer{err: domain.ErrOlderRelease})
	r.j.Step(context.Background())
	r.j.Step(context.Background())
	if n := r.logs.count("level=ERROR"); n != 2 {
		t.Fatalf("after an admission the refusal logged %d times in all", n)
	}
}

// Ensure the loop's stop conditions: before its Raft sees a leader every
// tick asks; a staged or deferred answer keeps the loop going; once a
// leader is seen it asks only while caught up; voter and promoted end it.
func TestJoinerStepStopConditions(t *testing.T) {
	t.Parallel()
	send := newSender().on("p:1", admitted(ports.JoinStaged), admitted(ports.JoinDeferred), admitted(ports.JoinPromoted))
	r := newJoinRig(t, send, "p:1")
	ctx := context.Background()
	if r.j.Step(ctx) || send.count() != 1 {
		t.Fatal("staged ended the loop or nothing was asked")
	}
	r.view.set(true, false)
	if r.j.Step(ctx) || send.count() != 1 {
		t.Fatal("a node seeing its leader but not caught up asked again")
	}
	r.view.set(true, true)
	if r.j.Step(ctx) || send.count() != 2 {
		t.Fatal("deferred ended the loop, or a caught-up node did not ask")
	}
	if !r.j.Step(ctx) {
		t.Fatal("promoted did not end the loop")
	}
	send.on("p:1", admitted(ports.JoinVoter))
	if !r.j.Step(ctx) {
		t.Fatal("voter did not end the loop")
	}
	r.view.set(false, false)
	send.on("p:1")
	if r.j.Step(ctx) {
		t.Fatal("an unreachable cluster ended the loop")
	}
}

// Ensure that Run keeps asking until the answer is voter, then returns;
// and that it returns when its context ends.
func TestJoinerRunEndsAsAVoterOrWithItsContext(t *testing.T) {
	t.Parallel()
	send := newSender().on("p:1", admitted(ports.JoinStaged), admitted(ports.JoinDeferred), admitted(ports.JoinVoter))
	r := newJoinRig(t, send, "p:1")
	r.j.SetPace(time.Millisecond, time.Millisecond)
	done := make(chan struct{})
	go func() { r.j.Run(context.Background()); close(done) }()
	waitUntil(t, "Run to return as a voter", func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	})
	if n := send.count(); n != 3 {
		t.Fatalf("asked %d times", n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	send.on("p:1")
	done = make(chan struct{})
	go func() { r.j.Run(ctx); close(done) }()
	cancel()
	<-done
}

// Ensure that Supervise runs the loop at once for a join-only node, and
// for any node only once it has seen no leader for 15 s (internals §9.3).
func TestSuperviseJoinsAfterFifteenLeaderlessSeconds(t *testing.T) {
	t.Parallel()
	send := newSender().on("p:1", admitted(ports.JoinVoter))
	r := newJoinRig(t, send, "p:1")
	r.j.SetPace(time.Millisecond, time.Millisecond)
	r.view.set(true, true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.j.Supervise(ctx, true); close(done) }()
	defer func() { cancel(); <-done }()
	waitUntil(t, "the join-only node's first join", func() bool { return send.count() == 1 })

	r.view.set(false, false)
	r.clock.Advance(14 * time.Second)
	reads := r.clock.readCount()
	waitUntil(t, "the watch to look at 14 leaderless seconds", func() bool { return r.clock.readCount() > reads+3 })
	if n := send.count(); n != 1 {
		t.Fatalf("joined after 14 leaderless seconds (%d asks)", n)
	}
	r.clock.Advance(time.Second)
	waitUntil(t, "a join after 15 leaderless seconds", func() bool { return send.count() == 2 })

	r.view.set(true, true) // a leader again: the watch starts over
	r.clock.Advance(time.Minute)
	reads = r.clock.readCount()
	waitUntil(t, "the watch to see the leader", func() bool { return r.clock.readCount() > reads+3 })
	if n := send.count(); n != 2 {
		t.Fatalf("joined while a leader is in view (%d asks)", n)
	}
}

// Ensure that the constructor rejects bad wiring.
func TestNewJoinerRejectsBadWiring(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Fatal("a joiner without a request was built")
		}
	}()
	membership.NewJoiner(membership.JoinerConfig{Sender: newSender(), View: &fakeView{}, Clock: fake.NewClock(time.Time{}), Log: nil})
}

// Ensure that a node that started from an empty data directory says so
// only until its replica sees a leader: a later join (a staged node asking
// for its promotion, or the loop run again after 15 leaderless seconds)
// must not make a leader hand its leadership over again (internals §9.3).
func TestJoinerStopsClaimingAnEmptyDataDirOnceItSawALeader(t *testing.T) {
	t.Parallel()
	req := joinReq("n4")
	req.DataDirEmpty = true
	send := newSender().on("p:1", admitted(ports.JoinStaged))
	r := newJoinRigFor(t, req, send, "p:1")
	ctx := context.Background()
	r.j.Step(ctx)
	if !send.lastRequest().DataDirEmpty {
		t.Fatal("the first join did not say the data directory is empty")
	}
	r.view.set(true, true)
	r.j.Step(ctx)
	if send.count() != 2 || send.lastRequest().DataDirEmpty {
		t.Fatalf("a join after seeing a leader: %+v (%d asks)", send.lastRequest(), send.count())
	}

	send = newSender().on("p:1", admitted(ports.JoinVoter))
	r = newJoinRigFor(t, req, send, "p:1")
	r.j.SetPace(time.Millisecond, time.Millisecond)
	r.view.set(true, true)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { r.j.Supervise(ctx, false); close(done) }()
	defer func() { cancel(); <-done }()
	reads := r.clock.readCount()
	waitUntil(t, "the watch to see the leader", func() bool { return r.clock.readCount() > reads+3 })
	r.view.set(false, false)
	r.clock.Advance(15 * time.Second)
	waitUntil(t, "a join after 15 leaderless seconds", func() bool { return send.count() == 1 })
	if send.lastRequest().DataDirEmpty {
		t.Fatal("the leaderless join still says the data directory is empty")
	}
}
