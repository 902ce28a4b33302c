package config

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// Floors and ranges of api.md §6.3.
const (
	maxHeaderBytesMin         = 4096
	evictionOrWalkMinMs       = 60_000
	offsetCommitIntervalMinMs = 10
	offsetCommitIntervalMaxMs = 60_000
	retentionFloorMs          = 3_600_000
	defaultPartitionsMin      = 3
	clusterPeersMin           = 3
	raftSnapshotIntervalMin   = 5 * time.Millisecond
)

// Validate checks every rule of api.md §6.3 and reports all violations,
// each naming its setting.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	c.validateHTTP(bad)
	c.validateCluster(bad)
	c.validateStorage(bad)
	c.validateTopic(bad)
	c.validateSecurity(bad)
	c.validateUnbuilt(bad)
	c.validateRemotes(bad)
	if c.Fanout.MaxBatchRecords <= 0 {
		bad("fanout.max_batch_records (%d) must be > 0", c.Fanout.MaxBatchRecords)
	}
	if c.Fanout.MaxBatchBytes <= 0 {
		bad("fanout.max_batch_bytes (%d) must be > 0", c.Fanout.MaxBatchBytes)
	}
	if c.Fanout.LingerMs < 0 {
		bad("fanout.linger_ms (%d) must be >= 0", c.Fanout.LingerMs)
	}
	if !oneOf(strings.ToLower(c.Log.Level), "debug", "info", "warn", "error") {
		bad("log.level (%q) must be debug, info, warn or error", c.Log.Level)
	}
	if !oneOf(c.Log.Format, "json", "text") {
		bad("log.format (%q) must be json or text", c.Log.Format)
	}
	return errors.Join(errs...)
}

func (c Config) validateHTTP(bad func(string, ...any)) {
	h := c.HTTP
	if h.Addr == "" {
		bad("http.addr must not be empty")
	}
	for name, d := range map[string]Duration{"http.read_timeout": h.ReadTimeout, "http.write_timeout": h.WriteTimeout, "http.idle_timeout": h.IdleTimeout, "http.shutdown_grace": h.ShutdownGrace} {
		if d <= 0 {
			bad("%s (%s) must be > 0", name, d.D())
		}
	}
	if h.MaxConsumeWait < 0 {
		bad("http.max_consume_wait (%s) must be >= 0", h.MaxConsumeWait.D())
	}
	if h.MaxConsumeWait >= h.WriteTimeout {
		bad("http.max_consume_wait (%s) must be < http.write_timeout (%s)", h.MaxConsumeWait.D(), h.WriteTimeout.D())
	}
	if h.MaxConsumeWait > h.ShutdownGrace {
		bad("http.max_consume_wait (%s) must be <= http.shutdown_grace (%s)", h.MaxConsumeWait.D(), h.ShutdownGrace.D())
	}
	if h.MaxHeaderBytes < maxHeaderBytesMin {
		bad("http.max_header_bytes (%d) must be >= %d", h.MaxHeaderBytes, maxHeaderBytesMin)
	}
	for name, n := range map[string]int64{"http.max_connections": int64(h.MaxConnections), "http.max_consume_in_flight_per_identity": int64(h.MaxConsumeInFlightPerIdentity), "http.max_produce_in_flight_per_identity": int64(h.MaxProduceInFlightPerIdentity), "http.max_batch_body_bytes_in_flight": h.MaxBatchBodyBytesInFlight} {
		if n < 0 {
			bad("%s (%d) must be >= 0", name, n)
		}
	}
}

func (c Config) validateCluster(bad func(string, ...any)) {
	cl := c.Cluster
	if cl.Addr == "" {
		bad("cluster.addr must not be empty")
	} else if cl.Addr == c.HTTP.Addr {
		bad("cluster.addr (%s) must differ from http.addr", cl.Addr)
	}
	if cl.RaftSnapshotThreshold <= 0 {
		bad("cluster.raft_snapshot_threshold (%d) must be > 0", cl.RaftSnapshotThreshold)
	}
	if cl.RaftSnapshotInterval.D() < raftSnapshotIntervalMin {
		bad("cluster.raft_snapshot_interval (%s) must be >= %s", cl.RaftSnapshotInterval.D(), raftSnapshotIntervalMin)
	}
	if len(cl.Peers) == 0 {
		return
	}
	if cl.NodeID == "" {
		bad("cluster.node_id is required when cluster.peers is set")
	}
	if len(cl.Peers) < clusterPeersMin {
		bad("cluster.peers lists %d members; at least %d are required", len(cl.Peers), clusterPeersMin)
	}
	ids, addrs, self := map[string]bool{}, map[string]bool{}, false
	for _, p := range cl.Peers {
		if p.ID == "" || p.Addr == "" {
			bad("cluster.peers: every entry needs an id and an addr (got %q@%q)", p.ID, p.Addr)
		}
		if ids[p.ID] || addrs[p.Addr] {
			bad("cluster.peers: duplicate entry %q@%q", p.ID, p.Addr)
		}
		ids[p.ID], addrs[p.Addr] = true, true
		self = self || p.ID == cl.NodeID
	}
	if !self && cl.AdvertiseAddr == "" {
		bad("cluster.peers has no entry for this node (%q) and cluster.advertise_addr is not set", cl.NodeID)
	}
}

func (c Config) validateStorage(bad func(string, ...any)) {
	s := c.Storage
	if s.DataDir == "" {
		bad("storage.data_dir must not be empty")
	}
	if !oneOf(s.Codec, "none", "zstd") {
		bad("storage.codec (%q) must be none or zstd", s.Codec)
	}
	if !oneOf(strings.ToLower(s.CompressionLevel), "fastest", "default", "better", "best") {
		bad("storage.compression_level (%q) must be fastest, default, better or best", s.CompressionLevel)
	}
	for name, v := range map[string]int64{"storage.idle_log_eviction_ms": s.IdleLogEvictionMs, "storage.cold_retention_walk_ms": s.ColdRetentionWalkMs} {
		if v != 0 && v < evictionOrWalkMinMs {
			bad("%s (%d) must be 0 or >= %d", name, v, evictionOrWalkMinMs)
		}
	}
	if v := s.ConsumerOffsetCommitIntervalMs; v < offsetCommitIntervalMinMs || v > offsetCommitIntervalMaxMs {
		bad("storage.consumer_offset_commit_interval_ms (%d) must be in %d..%d", v, offsetCommitIntervalMinMs, offsetCommitIntervalMaxMs)
	}
}

func (c Config) validateTopic(bad func(string, ...any)) {
	t := c.Topic
	if t.MaxPartitions <= 0 {
		bad("topic.max_partitions (%d) must be > 0", t.MaxPartitions)
	}
	if t.DefaultPartitions < defaultPartitionsMin || t.DefaultPartitions > t.MaxPartitions {
		bad("topic.default_partitions (%d) must be >= %d and <= topic.max_partitions (%d)", t.DefaultPartitions, defaultPartitionsMin, t.MaxPartitions)
	}
	if r := t.DefaultRetentionAgeMs; r != 0 && r < retentionFloorMs {
		bad("topic.default_retention_age_ms (%d) must be 0 or >= %d", r, retentionFloorMs)
	}
	if v := t.DefaultVisibilityTimeoutMs; v <= 0 || (t.DefaultRetentionAgeMs != 0 && v > t.DefaultRetentionAgeMs) {
		bad("topic.default_visibility_timeout_ms (%d) must be > 0 and <= topic.default_retention_age_ms", v)
	}
	if t.DefaultMaxInFlightPerPartition <= 0 {
		bad("topic.default_max_in_flight_per_partition (%d) must be > 0", t.DefaultMaxInFlightPerPartition)
	}
	if t.DefaultMaxAckedAheadPerPartition <= 0 {
		bad("topic.default_max_acked_ahead_per_partition (%d) must be > 0", t.DefaultMaxAckedAheadPerPartition)
	}
}

func (c Config) validateSecurity(bad func(string, ...any)) {
	s, peers := c.Security, len(c.Cluster.Peers) > 0
	tlsFiles := countNonEmpty(s.ClusterTLSCertFile, s.ClusterTLSKeyFile, s.ClusterTLSCAFile)
	if tlsFiles != 0 && tlsFiles != 3 {
		bad("security.cluster_tls_cert_file, _key_file and _ca_file must be set together")
	}
	switch {
	case s.Enabled && peers:
		if c.Secrets.ClusterSecret == "" {
			bad("NARAD_CLUSTER_SECRET is required when security is enabled and cluster.peers is set")
		}
		if tlsFiles != 3 && !s.AllowPlaintextRaft {
			bad("Raft TLS (security.cluster_tls_*_file) is required when security is enabled and cluster.peers is set, unless security.allow_plaintext_raft")
		}
	case s.Enabled && tlsFiles == 0 && !s.AllowPlaintextRaft && !loopback(c.singleNodeRaftAddr()):
		bad("cluster.addr (%s) binds Raft on %s, which is not a loopback address: a single secured node without Raft TLS keeps Raft on loopback (leave the host out, e.g. :7943), or set security.cluster_tls_*_file, or security.allow_plaintext_raft",
			c.Cluster.Addr, c.singleNodeRaftAddr())
	case !s.Enabled && peers && !s.AllowInsecureCluster:
		bad("security.allow_insecure_cluster is required to run a cluster (cluster.peers) with security disabled")
	}
}

func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func countNonEmpty(ss ...string) int {
	n := 0
	for _, s := range ss {
		if s != "" {
			n++
		}
	}
	return n
}

func oneOf(s string, options ...string) bool {
	for _, o := range options {
		if s == o {
			return true
		}
	}
	return false
}

// singleNodeRaftAddr is where a node without peers binds Raft: the
// advertised address when set, else cluster.addr with a missing or
// unspecified host (":7943", "0.0.0.0:7943") filled with 127.0.0.1, as the
// node's own address derivation fills it (api.md §6.4).
func (c Config) singleNodeRaftAddr() string {
	addr := c.Cluster.AdvertiseAddr
	if addr == "" {
		addr = c.Cluster.Addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
