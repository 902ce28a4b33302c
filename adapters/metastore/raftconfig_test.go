package metastore

import (
	"testing"
	"time"
)

// At the default tick a leader heartbeats every 100 ms, not every tick
// (an idle cluster's Raft traffic halves), and a follower still hears
// five heartbeats within one election timeout, so CheckQuorum and the
// 500 ms election stay as safe as before.
func TestRaftHeartbeatEveryOtherTick(t *testing.T) {
	s := &Store{shardID: 1, replicaID: 1}
	c := s.raftConfig(StoreConfig{})
	if err := c.Validate(); err != nil {
		t.Fatalf("dragonboat refuses the config: %v", err)
	}
	heartbeat := defaultRTT * time.Duration(c.HeartbeatRTT)
	election := defaultRTT * time.Duration(c.ElectionRTT)
	if heartbeat != 100*time.Millisecond {
		t.Errorf("heartbeat every %v, want 100ms", heartbeat)
	}
	if election != 500*time.Millisecond {
		t.Errorf("election after %v, want 500ms", election)
	}
	if per := election / heartbeat; per < 5 {
		t.Errorf("%d heartbeats per election timeout, want at least 5", per)
	}
	if !c.CheckQuorum || !c.PreVote {
		t.Errorf("CheckQuorum %v PreVote %v: want both", c.CheckQuorum, c.PreVote)
	}
}
