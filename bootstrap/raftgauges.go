package bootstrap

import (
	"github.com/narad/narad/adapters/telemetry"
	"github.com/narad/narad/ports"
)

// registerRaftGauges exports the metadata replica's Raft state (api.md §7).
// The port tells a leader from the rest only, so a candidate reads as a
// follower; narad_raft_has_leader says whether a leader is known at all.
func registerRaftGauges(m *telemetry.Metrics, store ports.MetadataStore) {
	m.RaftGauges(func() telemetry.RaftStatus {
		_, known := store.Leader()
		s := telemetry.RaftStatus{State: telemetry.RaftFollower, HasLeader: known}
		if store.IsLeader() {
			s.State = telemetry.RaftLeader
		}
		return s
	})
}
