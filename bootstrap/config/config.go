package config

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Duration is a JSON duration: a string with a unit ("10s", "500ms"); a bare
// number is refused.
type Duration time.Duration

// UnmarshalJSON accepts only a quoted Go duration.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string with a unit such as \"10s\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Config is a node's whole configuration.
type Config struct {
	HTTP     HTTP     `json:"http"`
	Cluster  Cluster  `json:"cluster"`
	Storage  Storage  `json:"storage"`
	Topic    Topic    `json:"topic"`
	Fanout   Fanout   `json:"fanout"`
	Remotes  Remotes  `json:"remotes"`
	Log      Log      `json:"log"`
	Security Security `json:"security"`
	Secrets  Secrets  `json:"-"`
}

// HTTP is the client-facing listener.
type HTTP struct {
	Addr                          string   `json:"addr"`
	PprofAddr                     string   `json:"pprof_addr"`
	ReadTimeout                   Duration `json:"read_timeout"`
	WriteTimeout                  Duration `json:"write_timeout"`
	IdleTimeout                   Duration `json:"idle_timeout"`
	ShutdownGrace                 Duration `json:"shutdown_grace"`
	MaxConsumeWait                Duration `json:"max_consume_wait"`
	MaxHeaderBytes                int      `json:"max_header_bytes"`
	MaxConnections                int      `json:"max_connections"`
	MaxConsumeInFlightPerIdentity int      `json:"max_consume_in_flight_per_identity"`
	MaxProduceInFlightPerIdentity int      `json:"max_produce_in_flight_per_identity"`
	MaxBatchBodyBytesInFlight     int64    `json:"max_batch_body_bytes_in_flight"`
	MetricsAddr                   string   `json:"metrics_addr"`
	MetricsUnauthenticated        bool     `json:"metrics_unauthenticated"`
}

// Peer is one cluster member of the bootstrap list.
type Peer struct {
	ID   string `json:"id"`
	Addr string `json:"addr"`
}

// Cluster is Raft and membership.
type Cluster struct {
	Addr                  string   `json:"addr"`
	NodeID                string   `json:"node_id"`
	Peers                 []Peer   `json:"peers"`
	AdvertiseAddr         string   `json:"advertise_addr"`
	InitialMembers        []string `json:"initial_members"`
	RaftSnapshotThreshold int      `json:"raft_snapshot_threshold"`
	RaftSnapshotInterval  Duration `json:"raft_snapshot_interval"`
	RaftTrailingLogs      int      `json:"raft_trailing_logs"`
}

// Storage holds the seven configurable storage keys; every other storage
// setting is internal (api.md §6.2).
type Storage struct {
	DataDir                        string `json:"data_dir"`
	Codec                          string `json:"codec"`
	CompressionLevel               string `json:"compression_level"`
	IdleLogEvictionMs              int64  `json:"idle_log_eviction_ms"`
	ColdRetentionWalkMs            int64  `json:"cold_retention_walk_ms"`
	ConsumerOffsetCommitIntervalMs int64  `json:"consumer_offset_commit_interval_ms"`
	IngressWALPrealloc             bool   `json:"ingress_wal_prealloc"`
}

// Topic holds the defaults of new topics.
type Topic struct {
	DefaultPartitions                int   `json:"default_partitions"`
	MaxPartitions                    int   `json:"max_partitions"`
	DefaultRetentionAgeMs            int64 `json:"default_retention_age_ms"`
	DefaultVisibilityTimeoutMs       int64 `json:"default_visibility_timeout_ms"`
	DefaultMaxInFlightPerPartition   int64 `json:"default_max_in_flight_per_partition"`
	DefaultMaxAckedAheadPerPartition int64 `json:"default_max_acked_ahead_per_partition"`
}

// Fanout tunes the fan-out engine.
type Fanout struct {
	MaxBatchRecords int   `json:"max_batch_records"`
	MaxBatchBytes   int64 `json:"max_batch_bytes"`
	LingerMs        int64 `json:"linger_ms"`
}

// Remotes guards outbound remote replication.
type Remotes struct {
	AllowedHosts    []string `json:"allowed_hosts"`
	AllowedPorts    []int    `json:"allowed_ports"`
	AllowAddresses  []string `json:"allow_addresses"`
	MaxHeldBytes    int64    `json:"max_held_bytes"`
	APIHopEncrypted bool     `json:"api_hop_encrypted"`
}

// Log is the process log.
type Log struct {
	Level  string `json:"level"`
	Format string `json:"format"`
}

// Security is authentication and cluster transport security.
type Security struct {
	Enabled                bool   `json:"enabled"`
	ClusterTLSCertFile     string `json:"cluster_tls_cert_file"`
	ClusterTLSKeyFile      string `json:"cluster_tls_key_file"`
	ClusterTLSCAFile       string `json:"cluster_tls_ca_file"`
	AllowPlaintextRaft     bool   `json:"allow_plaintext_raft"`
	AllowInsecureCluster   bool   `json:"allow_insecure_cluster"`
	AllowLegacyClusterAuth bool   `json:"allow_legacy_cluster_auth"`
}

// Secrets come from the environment only, never from the file.
type Secrets struct {
	AdminPassword         string
	ClusterSecret         string
	ClusterSecretPrevious string
}

// Default returns the built-in defaults of api.md §6.1.
func Default() Config {
	return Config{
		HTTP: HTTP{
			Addr: ":7942", ReadTimeout: Duration(10 * time.Second), WriteTimeout: Duration(30 * time.Second),
			IdleTimeout: Duration(60 * time.Second), ShutdownGrace: Duration(10 * time.Second),
			MaxConsumeWait: Duration(10 * time.Second), MaxHeaderBytes: 64 << 10, MaxConnections: 4096,
			MaxConsumeInFlightPerIdentity: 1024, MaxBatchBodyBytesInFlight: 256 << 20,
		},
		Cluster: Cluster{
			Addr: ":7943", NodeID: hostname(), RaftSnapshotThreshold: 8192,
			RaftSnapshotInterval: Duration(120 * time.Second), RaftTrailingLogs: 10240,
		},
		Storage: Storage{
			DataDir: "data", Codec: "none", CompressionLevel: "fastest", IdleLogEvictionMs: 1_800_000,
			ColdRetentionWalkMs: 300_000, ConsumerOffsetCommitIntervalMs: 1000,
		},
		Topic: Topic{
			DefaultPartitions: 3, MaxPartitions: 108, DefaultRetentionAgeMs: 604_800_000,
			DefaultVisibilityTimeoutMs: 30_000, DefaultMaxInFlightPerPartition: 1024,
			DefaultMaxAckedAheadPerPartition: 1024,
		},
		Fanout:   Fanout{MaxBatchRecords: 4096, MaxBatchBytes: 4 << 20, LingerMs: 25},
		Remotes:  Remotes{AllowedPorts: []int{443}, MaxHeldBytes: 256 << 20},
		Log:      Log{Level: "info", Format: "json"},
		Security: Security{Enabled: true},
	}
}

// String renders the configuration as JSON without secrets, for logs.
func (c Config) String() string {
	b, _ := json.Marshal(c)
	return strings.TrimSpace(string(b))
}
