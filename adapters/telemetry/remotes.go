package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"
)

// RemoteMetrics feeds the counters of remote replication (api.md §7, the
// narad_remote_* and narad_fanout_remote_* series). No series carries a
// URL, a username, a key or a ciphertext.
type RemoteMetrics struct {
	requests, failed, resent, skipped, checks, decrypts, refused, body, wire *prometheus.CounterVec
	rereads, seals, resealOpens                                              prometheus.Counter
	requestSeconds, slotWaitSeconds                                          *prometheus.HistogramVec
}

// RemoteSample is the state of remote replication on this node at scrape
// time.
type RemoteSample struct {
	Cursors      []RemoteCursorSample
	HeldBytes    int64
	Credentials  []RemoteCredentialSample
	Allowlist    bool
	PlainRaft    bool
	RemotesExist bool
	Remotes      []RemoteStateSample
	// KeyAgeSeconds is how long the current key has sealed passwords; 0
	// before the first seal.
	KeyAgeSeconds float64
	// CurrentKeySeals and PreviousKeySeals count the passwords sealed
	// under the current and the previous key (the seal cap, internals.md
	// §7.6). HasCurrentKey and HasPreviousKey are false, and the series
	// absent, when the node derives no such key: no salt yet, no usable
	// secret, no NARAD_CLUSTER_SECRET_PREVIOUS.
	CurrentKeySeals, PreviousKeySeals int64
	HasCurrentKey, HasPreviousKey     bool
}

// RemoteStateSample is what this node knows of one remote at scrape time.
type RemoteStateSample struct {
	Remote                  string
	RTTSeconds              float64 // 0 before a new connection
	GateBackoffSeconds      float64
	ChunkBytesLimit         int
	CredentialAgeSeconds    float64
	CredentialKeyCurrent    bool
	HasSendPath, HasSetTime bool
}

// RemoteCursorSample is one remote child cursor.
type RemoteCursorSample struct {
	Parent, Child string
	Partition     int32
	State         string
	LastOKMs      int64 // 0 before the first accepted request
	// LagSeconds is the age of the oldest record the remote lacks;
	// HeadroomSeconds the parent's retention minus it (HasHeadroom false
	// when the parent keeps forever).
	LagSeconds      float64
	HeadroomSeconds float64
	HasHeadroom     bool
}

// RemoteCredentialSample is this node's credential state of one remote.
type RemoteCredentialSample struct {
	Remote, State string
}

// Remotes registers the remote counters the returned RemoteMetrics feeds
// and the gauges sample answers at every scrape. Call it once per
// registry.
func (m *Metrics) Remotes(sample func() RemoteSample) *RemoteMetrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	r := &RemoteMetrics{
		requests: counter("narad_remote_requests_total", "Requests sent to a remote by answer code (error for transport failures).", "remote", "code"),
		failed:   counter("narad_remote_errors_total", "Failed requests to a remote by class.", "remote", "class"),
		resent:   counter("narad_remote_resent_records_total", "Records sent again after a request that may have landed.", "remote"),
		skipped:  counter("narad_fanout_remote_skipped_records_total", "Records an admin let a remote child drop.", "parent", "child"),
		checks:   counter("narad_fanout_remote_check_failures_total", "Target checks of a remote child that errored.", "parent", "child"),
		decrypts: counter("narad_remote_credential_decrypts_total", "Remote passwords opened (once per credential version).", "remote"),
		refused:  counter("narad_remote_destination_refused_total", "Dials the address guard refused, by remote and reason.", "remote", "reason"),
		body:     counter("narad_remote_body_bytes_total", "Request body bytes sent to a remote before compression.", "remote"),
		wire:     counter("narad_remote_wire_bytes_total", "Request body bytes sent to a remote as sent (after compression).", "remote"),
		rereads: prometheus.NewCounter(prometheus.CounterOpts{Name: "narad_fanout_remote_rereads_total",
			Help: "Slabs read again because their records did not fit remotes.max_held_bytes."}),
		seals:       prometheus.NewCounter(prometheus.CounterOpts{Name: "narad_remote_seals_total", Help: "Remote passwords sealed on this node."}),
		resealOpens: prometheus.NewCounter(prometheus.CounterOpts{Name: "narad_remote_reseal_opens_total", Help: "Remote passwords opened on this node to re-seal them."}),
		requestSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "narad_remote_request_seconds",
			Help: "Round trip of a request to a remote.", Buckets: prometheus.ExponentialBuckets(remoteBucketStartSeconds, bucketFactor, remoteBuckets)}, []string{"remote"}),
		slotWaitSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "narad_remote_inflight_wait_seconds",
			Help: "Wait for one of a remote's request slots.", Buckets: prometheus.ExponentialBuckets(remoteBucketStartSeconds, bucketFactor, remoteBuckets)}, []string{"remote"}),
	}
	m.Registry.MustRegister(r.requests, r.failed, r.resent, r.skipped, r.checks, r.decrypts, r.refused, r.body, r.wire,
		r.rereads, r.seals, r.resealOpens, r.requestSeconds, r.slotWaitSeconds, newRemoteCollector(sample))
	return r
}

func (r *RemoteMetrics) Request(remote, code string) { r.requests.WithLabelValues(remote, code).Inc() }
func (r *RemoteMetrics) Failed(remote, class string) { r.failed.WithLabelValues(remote, class).Inc() }
func (r *RemoteMetrics) Resent(remote string, n int) {
	r.resent.WithLabelValues(remote).Add(float64(n))
}
func (r *RemoteMetrics) Skipped(parent, child string, n int) {
	r.skipped.WithLabelValues(parent, child).Add(float64(n))
}
func (r *RemoteMetrics) CheckFailed(parent, child string) {
	r.checks.WithLabelValues(parent, child).Inc()
}
func (r *RemoteMetrics) Reread() { r.rereads.Inc() }

// Bytes counts one request body before and after compression.
func (r *RemoteMetrics) Bytes(remote string, body, wire int) {
	r.body.WithLabelValues(remote).Add(float64(body))
	r.wire.WithLabelValues(remote).Add(float64(wire))
}

// RequestSeconds observes one request's round trip to remote.
func (r *RemoteMetrics) RequestSeconds(remote string, seconds float64) {
	r.requestSeconds.WithLabelValues(remote).Observe(seconds)
}

// SlotWaitSeconds observes one wait for a request slot of remote.
func (r *RemoteMetrics) SlotWaitSeconds(remote string, seconds float64) {
	r.slotWaitSeconds.WithLabelValues(remote).Observe(seconds)
}

// Sealed counts one sealed password; ResealOpened one opened to re-seal.
func (r *RemoteMetrics) Sealed()       { r.seals.Inc() }
func (r *RemoteMetrics) ResealOpened() { r.resealOpens.Inc() }

// Decrypted counts one opened password of remote.
func (r *RemoteMetrics) Decrypted(remote string) { r.decrypts.WithLabelValues(remote).Inc() }

// DestinationRefused counts one dial to remote the guard refused.
func (r *RemoteMetrics) DestinationRefused(remote, reason string) {
	r.refused.WithLabelValues(remote, reason).Inc()
}

type remoteCollector struct {
	sample                                                         func() RemoteSample
	state, lastOK, held, cred, allowlist, plainRaft, lag, headroom *prometheus.Desc
	rtt, backoff, chunk, credAge, keyCurrent, keyAge, keySeals     *prometheus.Desc
}

func newRemoteCollector(sample func() RemoteSample) *remoteCollector {
	return &remoteCollector{
		sample: sample,
		state: prometheus.NewDesc("narad_fanout_remote_state", "1 for a remote child cursor's link state.",
			[]string{"parent", "child", "partition", "state"}, nil),
		lastOK: prometheus.NewDesc("narad_fanout_remote_last_success_timestamp_seconds", "When a remote child last had a request accepted.",
			[]string{"parent", "child"}, nil),
		held: prometheus.NewDesc("narad_remote_held_bytes", "Unsent records held in memory across failures.", nil, nil),
		lag: prometheus.NewDesc("narad_fanout_remote_lag_seconds", "Age of the oldest parent record a remote child's target lacks (its recovery point).",
			[]string{"parent", "child", "partition"}, nil),
		headroom: prometheus.NewDesc("narad_fanout_remote_retention_headroom_seconds", "Parent retention left before a remote child's link drops records.",
			[]string{"parent", "child", "partition"}, nil),
		cred: prometheus.NewDesc("narad_remote_credential_state", "1 for this node's credential cache state of a remote.",
			[]string{"remote", "state"}, nil),
		allowlist: prometheus.NewDesc("narad_remotes_allowlist_configured", "1 when remotes.allowed_hosts is set.", nil, nil),
		plainRaft: prometheus.NewDesc("narad_remotes_plaintext_raft", "1 when this node holds remotes over plaintext Raft.", nil, nil),
		rtt:       prometheus.NewDesc("narad_remote_rtt_seconds", "Connect time of the last new connection to a remote.", []string{"remote"}, nil),
		backoff:   prometheus.NewDesc("narad_remote_gate_backoff_seconds", "Current backoff of a remote's closed gate (0 when open).", []string{"remote"}, nil),
		chunk:     prometheus.NewDesc("narad_remote_chunk_bytes_limit", "Smallest adaptive request body cap of a remote's lanes.", []string{"remote"}, nil),
		credAge:   prometheus.NewDesc("narad_remote_credential_age_seconds", "Age of a remote's password.", []string{"remote"}, nil),
		keyCurrent: prometheus.NewDesc("narad_remote_credential_key_current", "1 when a remote's password is sealed under the current key.",
			[]string{"remote"}, nil),
		keyAge: prometheus.NewDesc("narad_remote_key_age_seconds", "How long a key has sealed remote passwords.", []string{"key"}, nil),
		keySeals: prometheus.NewDesc("narad_remote_key_seals", "Remote passwords sealed under a key, counted against its seal cap.",
			[]string{"key"}, nil),
	}
}

func (c *remoteCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.state, c.lastOK, c.held, c.cred, c.allowlist, c.plainRaft, c.lag, c.headroom,
		c.rtt, c.backoff, c.chunk, c.credAge, c.keyCurrent, c.keyAge, c.keySeals} {
		ch <- d
	}
}

func (c *remoteCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.sample()
	last := map[[2]string]int64{}
	for _, cur := range s.Cursors {
		p := part(cur.Partition)
		ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, 1, cur.Parent, cur.Child, p, cur.State)
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, cur.LagSeconds, cur.Parent, cur.Child, p)
		if cur.HasHeadroom {
			ch <- prometheus.MustNewConstMetric(c.headroom, prometheus.GaugeValue, cur.HeadroomSeconds, cur.Parent, cur.Child, p)
		}
		k := [2]string{cur.Parent, cur.Child}
		last[k] = max(last[k], cur.LastOKMs)
	}
	for k, ms := range last {
		if ms > 0 {
			ch <- prometheus.MustNewConstMetric(c.lastOK, prometheus.GaugeValue, float64(ms)/1000, k[0], k[1])
		}
	}
	for _, cr := range s.Credentials {
		ch <- prometheus.MustNewConstMetric(c.cred, prometheus.GaugeValue, 1, cr.Remote, cr.State)
	}
	for _, r := range s.Remotes {
		if r.HasSendPath {
			ch <- prometheus.MustNewConstMetric(c.rtt, prometheus.GaugeValue, r.RTTSeconds, r.Remote)
			ch <- prometheus.MustNewConstMetric(c.backoff, prometheus.GaugeValue, r.GateBackoffSeconds, r.Remote)
			ch <- prometheus.MustNewConstMetric(c.chunk, prometheus.GaugeValue, float64(r.ChunkBytesLimit), r.Remote)
		}
		if r.HasSetTime {
			ch <- prometheus.MustNewConstMetric(c.credAge, prometheus.GaugeValue, r.CredentialAgeSeconds, r.Remote)
			ch <- prometheus.MustNewConstMetric(c.keyCurrent, prometheus.GaugeValue, boolGauge(r.CredentialKeyCurrent), r.Remote)
		}
	}
	if s.KeyAgeSeconds > 0 {
		ch <- prometheus.MustNewConstMetric(c.keyAge, prometheus.GaugeValue, s.KeyAgeSeconds, "current")
	}
	if s.HasCurrentKey {
		ch <- prometheus.MustNewConstMetric(c.keySeals, prometheus.GaugeValue, float64(s.CurrentKeySeals), "current")
	}
	if s.HasPreviousKey {
		ch <- prometheus.MustNewConstMetric(c.keySeals, prometheus.GaugeValue, float64(s.PreviousKeySeals), "previous")
	}
	ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, float64(s.HeldBytes))
	ch <- prometheus.MustNewConstMetric(c.allowlist, prometheus.GaugeValue, boolGauge(s.Allowlist))
	ch <- prometheus.MustNewConstMetric(c.plainRaft, prometheus.GaugeValue, boolGauge(s.PlainRaft && s.RemotesExist))
}

func boolGauge(v bool) float64 {
	if v {
		return 1
	}
	return 0
}
