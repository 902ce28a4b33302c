package bootstrap

import (
	"context"
	"time"

	"github.com/narad/narad/adapters/metastore"
	"github.com/narad/narad/adapters/telemetry"
)

// registerRaftGauges exports the metadata replica's Raft state (api.md §7).
// The port tells a leader from the rest only, so a candidate reads as a
// follower; narad_raft_has_leader says whether a leader is known at all.
func registerRaftGauges(m *telemetry.Metrics, store *metastore.Store) {
	m.RaftGauges(func() telemetry.RaftStatus {
		_, known := store.Leader()
		s := telemetry.RaftStatus{State: telemetry.RaftFollower, HasLeader: known, AppliedIndex: store.AppliedIndex()}
		if store.IsLeader() {
			s.State = telemetry.RaftLeader
		}
		ctx, cancel := context.WithTimeout(context.Background(), raftMembershipScrapeTimeout)
		defer cancel()
		if ms, err := store.Membership(ctx); err == nil {
			s.Voters, s.NonVoters, s.MembersKnown = len(ms.Voters), len(ms.NonVoters), true
		}
		return s
	})
}

// raftMembershipScrapeTimeout bounds the configuration read of one scrape;
// without an answer the voter gauges are left out of that scrape.
const raftMembershipScrapeTimeout = time.Second
