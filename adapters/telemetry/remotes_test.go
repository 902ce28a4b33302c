package telemetry

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// ensure that the remote series read the counters and the scrape-time
// sample, with no URL, username or key in any label.
func TestRemoteSeries(t *testing.T) {
	m := NewMetrics()
	sample := RemoteSample{
		Cursors: []RemoteCursorSample{
			{Parent: "orders", Child: "orders-dr", Partition: 0, State: "running", LastOKMs: 1_700_000_000_000, LagSeconds: 12, HeadroomSeconds: 86388, HasHeadroom: true},
			{Parent: "orders", Child: "orders-dr", Partition: 1, State: "auth_failed"},
		},
		HeldBytes: 42, Credentials: []RemoteCredentialSample{{Remote: "dr", State: "ready"}},
		Allowlist: true, PlainRaft: true, RemotesExist: true,
	}
	r := m.Remotes(func() RemoteSample { return sample })
	r.Request("dr", "202")
	r.Failed("dr", "auth_failed")
	r.Resent("dr", 3)
	r.Skipped("orders", "orders-dr", 1)
	r.Reread()
	want := `
# HELP narad_fanout_remote_state 1 for a remote child cursor's link state.
# TYPE narad_fanout_remote_state gauge
narad_fanout_remote_state{child="orders-dr",parent="orders",partition="0",state="running"} 1
narad_fanout_remote_state{child="orders-dr",parent="orders",partition="1",state="auth_failed"} 1
# HELP narad_fanout_remote_last_success_timestamp_seconds When a remote child last had a request accepted.
# TYPE narad_fanout_remote_last_success_timestamp_seconds gauge
narad_fanout_remote_last_success_timestamp_seconds{child="orders-dr",parent="orders"} 1.7e+09
# HELP narad_fanout_remote_lag_seconds Age of the oldest parent record a remote child's target lacks (its recovery point).
# TYPE narad_fanout_remote_lag_seconds gauge
narad_fanout_remote_lag_seconds{child="orders-dr",parent="orders",partition="0"} 12
narad_fanout_remote_lag_seconds{child="orders-dr",parent="orders",partition="1"} 0
# HELP narad_fanout_remote_retention_headroom_seconds Parent retention left before a remote child's link drops records.
# TYPE narad_fanout_remote_retention_headroom_seconds gauge
narad_fanout_remote_retention_headroom_seconds{child="orders-dr",parent="orders",partition="0"} 86388
# HELP narad_remote_held_bytes Unsent records held in memory across failures.
# TYPE narad_remote_held_bytes gauge
narad_remote_held_bytes 42
# HELP narad_remote_credential_state 1 for this node's credential cache state of a remote.
# TYPE narad_remote_credential_state gauge
narad_remote_credential_state{remote="dr",state="ready"} 1
# HELP narad_remotes_plaintext_raft 1 when this node holds remotes over plaintext Raft.
# TYPE narad_remotes_plaintext_raft gauge
narad_remotes_plaintext_raft 1
# HELP narad_remote_requests_total Requests sent to a remote by answer code (error for transport failures).
# TYPE narad_remote_requests_total counter
narad_remote_requests_total{code="202",remote="dr"} 1
# HELP narad_remote_resent_records_total Records sent again after a request that may have landed.
# TYPE narad_remote_resent_records_total counter
narad_remote_resent_records_total{remote="dr"} 3
# HELP narad_fanout_remote_rereads_total Slabs read again because their records did not fit remotes.max_held_bytes.
# TYPE narad_fanout_remote_rereads_total counter
narad_fanout_remote_rereads_total 1
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "narad_fanout_remote_state",
		"narad_fanout_remote_last_success_timestamp_seconds", "narad_fanout_remote_lag_seconds", "narad_fanout_remote_retention_headroom_seconds", "narad_remote_held_bytes", "narad_remote_credential_state",
		"narad_remotes_plaintext_raft", "narad_remote_requests_total", "narad_remote_resent_records_total",
		"narad_fanout_remote_rereads_total"); err != nil {
		t.Fatal(err)
	}
	sample.RemotesExist = false
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader("# HELP narad_remotes_plaintext_raft 1 when this node holds remotes over plaintext Raft.\n# TYPE narad_remotes_plaintext_raft gauge\nnarad_remotes_plaintext_raft 0\n"),
		"narad_remotes_plaintext_raft"); err != nil {
		t.Fatal(err)
	}
}

// ensure that the per-remote gauges, the key's age and the histograms and
// seal counters appear with their values.
func TestRemoteStateSeries(t *testing.T) {
	m := NewMetrics()
	sample := RemoteSample{KeyAgeSeconds: 3600, Remotes: []RemoteStateSample{
		{Remote: "dr", HasSendPath: true, HasSetTime: true, RTTSeconds: 0.002, GateBackoffSeconds: 0.5, ChunkBytesLimit: 65536,
			CredentialAgeSeconds: 60, CredentialKeyCurrent: true},
		{Remote: "idle", HasSetTime: true, CredentialAgeSeconds: 5},
	}}
	r := m.Remotes(func() RemoteSample { return sample })
	r.RequestSeconds("dr", 0.01)
	r.SlotWaitSeconds("dr", 0)
	r.Sealed()
	r.ResealOpened()
	want := `
# HELP narad_remote_chunk_bytes_limit Smallest adaptive request body cap of a remote's lanes.
# TYPE narad_remote_chunk_bytes_limit gauge
narad_remote_chunk_bytes_limit{remote="dr"} 65536
# HELP narad_remote_credential_key_current 1 when a remote's password is sealed under the current key.
# TYPE narad_remote_credential_key_current gauge
narad_remote_credential_key_current{remote="dr"} 1
narad_remote_credential_key_current{remote="idle"} 0
# HELP narad_remote_key_age_seconds How long a key has sealed remote passwords.
# TYPE narad_remote_key_age_seconds gauge
narad_remote_key_age_seconds{key="current"} 3600
# HELP narad_remote_seals_total Remote passwords sealed on this node.
# TYPE narad_remote_seals_total counter
narad_remote_seals_total 1
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "narad_remote_chunk_bytes_limit",
		"narad_remote_credential_key_current", "narad_remote_key_age_seconds", "narad_remote_seals_total"); err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]int{"narad_remote_rtt_seconds": 1, "narad_remote_gate_backoff_seconds": 1,
		"narad_remote_credential_age_seconds": 2, "narad_remote_request_seconds": 1, "narad_remote_inflight_wait_seconds": 1,
		"narad_remote_reseal_opens_total": 1} {
		if got, err := testutil.GatherAndCount(m.Registry, name); err != nil || got != n {
			t.Errorf("%s: %d series (%v), want %d", name, got, err, n)
		}
	}
}

// ensure that the seal count of each key is labelled current or previous,
// never with a key version, and that a key the node does not derive has no
// series.
func TestRemoteKeySealsSeries(t *testing.T) {
	m := NewMetrics()
	sample := RemoteSample{HasCurrentKey: true, CurrentKeySeals: 3, HasPreviousKey: true, PreviousKeySeals: 7}
	m.Remotes(func() RemoteSample { return sample })
	want := `
# HELP narad_remote_key_seals Remote passwords sealed under a key, counted against its seal cap.
# TYPE narad_remote_key_seals gauge
narad_remote_key_seals{key="current"} 3
narad_remote_key_seals{key="previous"} 7
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "narad_remote_key_seals"); err != nil {
		t.Fatal(err)
	}
	sample = RemoteSample{HasCurrentKey: true}
	want = `
# HELP narad_remote_key_seals Remote passwords sealed under a key, counted against its seal cap.
# TYPE narad_remote_key_seals gauge
narad_remote_key_seals{key="current"} 0
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "narad_remote_key_seals"); err != nil {
		t.Fatal(err)
	}
	sample = RemoteSample{}
	if n, err := testutil.GatherAndCount(m.Registry, "narad_remote_key_seals"); err != nil || n != 0 {
		t.Fatalf("%d series (%v) without a key, want none", n, err)
	}
}
