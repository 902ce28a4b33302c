package telemetry

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// ensure that narad_raft_state marks exactly the current state and narad_raft_has_leader follows the status read at scrape time (api.md §7).
func TestRaftGaugesFollowTheStatus(t *testing.T) {
	m := NewMetrics()
	status := RaftStatus{State: RaftLeader, HasLeader: true}
	m.RaftGauges(func() RaftStatus { return status })
	want := func(leader, follower, has string) string {
		return `
# HELP narad_raft_has_leader 1 while the replica knows a metadata leader.
# TYPE narad_raft_has_leader gauge
narad_raft_has_leader ` + has + `
# HELP narad_raft_state 1 for the metadata replica's current Raft state.
# TYPE narad_raft_state gauge
narad_raft_state{state="candidate"} 0
narad_raft_state{state="follower"} ` + follower + `
narad_raft_state{state="leader"} ` + leader + `
narad_raft_state{state="shutdown"} 0
`
	}
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want("1", "0", "1")), "narad_raft_state", "narad_raft_has_leader"); err != nil {
		t.Fatal(err)
	}
	status = RaftStatus{State: RaftFollower}
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want("0", "1", "0")), "narad_raft_state", "narad_raft_has_leader"); err != nil {
		t.Fatal(err)
	}
}

// ensure that the voter gauges follow the configuration and are left out of
// a scrape that could not read it (api.md §7 narad_raft_voters,
// narad_raft_nonvoters).
func TestRaftVoterGauges(t *testing.T) {
	m := NewMetrics()
	status := RaftStatus{AppliedIndex: 42, Voters: 3, NonVoters: 2, MembersKnown: true}
	m.RaftGauges(func() RaftStatus { return status })
	want := `
# HELP narad_raft_applied_index Newest Raft entry index the metadata state machine applied.
# TYPE narad_raft_applied_index gauge
narad_raft_applied_index 42
# HELP narad_raft_nonvoters Non-voting (staged) members of the metadata shard's Raft configuration.
# TYPE narad_raft_nonvoters gauge
narad_raft_nonvoters 2
# HELP narad_raft_voters Voting members of the metadata shard's Raft configuration.
# TYPE narad_raft_voters gauge
narad_raft_voters 3
`
	names := []string{"narad_raft_applied_index", "narad_raft_voters", "narad_raft_nonvoters"}
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	status.MembersKnown = false
	if n, err := testutil.GatherAndCount(m.Registry, "narad_raft_voters", "narad_raft_nonvoters"); err != nil || n != 0 {
		t.Fatalf("unknown configuration still exported %d series, %v", n, err)
	}
}
