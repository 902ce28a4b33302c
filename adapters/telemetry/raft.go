package telemetry

import "github.com/prometheus/client_golang/prometheus"

// Raft states of narad_raft_state (api.md §7).
const (
	RaftFollower  = "follower"
	RaftCandidate = "candidate"
	RaftLeader    = "leader"
	RaftShutdown  = "shutdown"
)

var raftStates = [...]string{RaftFollower, RaftCandidate, RaftLeader, RaftShutdown}

// RaftStatus is the metadata replica's Raft view at scrape time.
type RaftStatus struct {
	// State is one of the Raft* constants.
	State        string
	HasLeader    bool
	AppliedIndex uint64
	// Voters and NonVoters count the Raft configuration's members when
	// MembersKnown (the configuration could be read at scrape time).
	Voters, NonVoters int
	MembersKnown      bool
}

// raftCollector reads the replica's status once per scrape and exports it
// as narad_raft_state{state} (1 for the current state, 0 for the others)
// and narad_raft_has_leader.
type raftCollector struct {
	status                    func() RaftStatus
	state, hasLeader, applied *prometheus.Desc
	voters, nonVoters         *prometheus.Desc
}

// RaftGauges registers narad_raft_state, narad_raft_has_leader,
// narad_raft_applied_index, narad_raft_voters and narad_raft_nonvoters, read
// from status at every scrape.
func (m *Metrics) RaftGauges(status func() RaftStatus) {
	m.Registry.MustRegister(&raftCollector{
		status:    status,
		state:     prometheus.NewDesc("narad_raft_state", "1 for the metadata replica's current Raft state.", []string{"state"}, nil),
		hasLeader: prometheus.NewDesc("narad_raft_has_leader", "1 while the replica knows a metadata leader.", nil, nil),
		applied:   prometheus.NewDesc("narad_raft_applied_index", "Newest Raft entry index the metadata state machine applied.", nil, nil),
		voters:    prometheus.NewDesc("narad_raft_voters", "Voting members of the metadata shard's Raft configuration.", nil, nil),
		nonVoters: prometheus.NewDesc("narad_raft_nonvoters", "Non-voting (staged) members of the metadata shard's Raft configuration.", nil, nil),
	})
}

func (c *raftCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.state
	ch <- c.hasLeader
	ch <- c.applied
	ch <- c.voters
	ch <- c.nonVoters
}

func (c *raftCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.status()
	for _, name := range raftStates {
		ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, flag(s.State == name), name)
	}
	ch <- prometheus.MustNewConstMetric(c.hasLeader, prometheus.GaugeValue, flag(s.HasLeader))
	ch <- prometheus.MustNewConstMetric(c.applied, prometheus.GaugeValue, float64(s.AppliedIndex))
	if s.MembersKnown {
		ch <- prometheus.MustNewConstMetric(c.voters, prometheus.GaugeValue, float64(s.Voters))
		ch <- prometheus.MustNewConstMetric(c.nonVoters, prometheus.GaugeValue, float64(s.NonVoters))
	}
}

func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
