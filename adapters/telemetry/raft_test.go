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
