package metastore

import (
	"testing"
	"time"
)

// Ensure that only one leaderless "dropped ..." warning per 5 s stays a
// warning, and that other warnings are never demoted.
func TestLeaderlessWarningsAreRateLimited(t *testing.T) {
	lastLeaderlessWarn.Store(0)
	t.Cleanup(func() { lastLeaderlessWarn.Store(0) })
	t0 := time.Unix(1_800_000_000, 0)
	msg := "[f:1,l:48,t:2,c:48,a:48] [00001:72582] t3 dropped proposal, no leader"
	for _, step := range []struct {
		at     time.Duration
		msg    string
		repeat bool
	}{
		{0, msg, false},
		{50 * time.Millisecond, msg, true},
		{time.Second, "[00001:1] t3 dropped read index, no leader", true},
		{2 * time.Second, "breaker n1 to n2 failed", false},
		{5 * time.Second, msg, false},
		{5*time.Second + time.Millisecond, msg, true},
	} {
		if got := leaderlessRepeat(step.msg, t0.Add(step.at)); got != step.repeat {
			t.Fatalf("at %s %q: repeat=%v, want %v", step.at, step.msg, got, step.repeat)
		}
	}
}

// Ensure that the election messages every node start logs (seen on a fresh
// single node and on a three-node cluster's first election) read as info,
// while other raft warnings stay warnings (issue 17: a healthy start logs no WARN).
func TestRoutineElectionMessagesAreInfo(t *testing.T) {
	for msg, want := range map[string]bool{
		"[f:1,l:1,t:1,c:1,a:1] [00001:00460] t1 became PreVote candidate":                                  true,
		"[f:1,l:1,t:1,c:1,a:1] [00001:00460] t1 received RequestPreVoteResp from n00460":                   true,
		"[f:1,l:1,t:1,c:1,a:1] [00001:00460] t2 became candidate":                                          true,
		"[f:1,l:1,t:1,c:1,a:1] [00001:00460] t2 received RequestVoteResp from n00460":                      true,
		"[f:1,l:1,t:2,c:1,a:1] [00001:00460] t2 became leader":                                             true,
		"[f:1,l:1,t:3,c:1,a:1] [00001:00460] t3 became follower":                                           true,
		"[f:1,l:3,t:1,c:3,a:3] [00001:16160] t1 sent RequestPreVote to n00793":                             true,
		"[f:1,l:3,t:1,c:3,a:3] [00001:16160] t2 sent RequestVote to n72582":                                true,
		"[f:1,l:3,t:1,c:3,a:3] [00001:72582] t1 cast preVote from n16160 index 3 term 2, log term: 1":      true,
		"[f:1,l:3,t:1,c:3,a:3] [00001:72582] t2 cast vote from n16160 index 3 term 2, log term: 1":         true,
		"[f:1,l:3,t:1,c:3,a:3] [00001:72582] t1 received RequestVote with higher term (2) from n16160":     true,
		"[f:1,l:0,t:0,c:0,a:0] [00001:29004] t0 received Heartbeat with higher term (2) from n16160":       true,
		"[f:1,l:3,t:1,c:3,a:3] [00001:72582] t1 become followerKE after receiving higher term from n16160": true,
		"[f:1,l:3,t:1,c:3,a:3] [00001:16160] t1 received 2 preVotes and 0 rejections, quorum is 2":         true,
		"[f:1,l:3,t:1,c:3,a:3] [00001:16160] t2 received 2 votes and 0 rejections, quorum is 2":            true,
		"[f:1,l:3,t:2,c:3,a:3] [00001:16160] t2 received 1 votes and 1 rejections, quorum is 2":            false,
		"breaker n1 to n2 failed, connect and process failed":                                              false,
		"[00001:1] t3 dropped proposal, no leader":                                                         false,
		"mutual TLS disabled, communication is insecure":                                                   true,
		"ElectionRTT is not a magnitude larger than HeartbeatRTT":                                          true,
	} {
		if got := routineElection(msg); got != want {
			t.Errorf("%q: routine=%v, want %v", msg, got, want)
		}
	}
}

// Ensure that plaintext Raft is a warning only where other nodes can reach
// it: a single node's loopback address is not.
func TestLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7943": true, "[::1]:7943": true, "localhost:7943": true, "127.0.0.5:1": true,
		"10.0.0.1:7943": false, ":7943": false, "0.0.0.0:7943": false, "narad-0.narad:7943": false, "bad": false,
	} {
		if got := loopbackAddr(addr); got != want {
			t.Errorf("%q: loopback=%v, want %v", addr, got, want)
		}
	}
}

// Ensure that "no leader" messages are routine only within the grace after
// a Host starts.
func TestLeaderlessAtStartIsRoutineOnlyDuringTheGrace(t *testing.T) {
	prev := hostStarted.Load()
	t.Cleanup(func() { hostStarted.Store(prev) })
	t0 := time.Unix(1_800_000_000, 0)
	hostStarted.Store(t0.UnixNano())
	msg := "[00001:00460] t1 dropped proposal, no leader"
	if !leaderlessAtStart(msg, t0.Add(time.Second)) {
		t.Fatal("a no-leader message 1 s after the start is not routine")
	}
	if leaderlessAtStart(msg, t0.Add(leaderlessStartGrace)) {
		t.Fatal("a no-leader message after the grace is routine")
	}
	if leaderlessAtStart("breaker n1 to n2 failed", t0.Add(time.Second)) {
		t.Fatal("another warning at the start is routine")
	}
}
