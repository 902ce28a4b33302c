package config

import (
	"errors"
	"fmt"
	"strings"
)

// envKeys maps each NARAD_* variable to its setting (api.md §6.1). The
// storage keys other than data_dir have no variable.
var envKeys = map[string]string{
	"NARAD_HTTP_ADDR":                                   "http.addr",
	"NARAD_HTTP_PPROF_ADDR":                             "http.pprof_addr",
	"NARAD_HTTP_READ_TIMEOUT":                           "http.read_timeout",
	"NARAD_HTTP_WRITE_TIMEOUT":                          "http.write_timeout",
	"NARAD_HTTP_IDLE_TIMEOUT":                           "http.idle_timeout",
	"NARAD_HTTP_SHUTDOWN_GRACE":                         "http.shutdown_grace",
	"NARAD_HTTP_MAX_CONSUME_WAIT":                       "http.max_consume_wait",
	"NARAD_HTTP_MAX_HEADER_BYTES":                       "http.max_header_bytes",
	"NARAD_HTTP_MAX_CONNECTIONS":                        "http.max_connections",
	"NARAD_HTTP_MAX_CONSUME_IN_FLIGHT_PER_IDENTITY":     "http.max_consume_in_flight_per_identity",
	"NARAD_HTTP_MAX_PRODUCE_IN_FLIGHT_PER_IDENTITY":     "http.max_produce_in_flight_per_identity",
	"NARAD_HTTP_MAX_BATCH_BODY_BYTES_IN_FLIGHT":         "http.max_batch_body_bytes_in_flight",
	"NARAD_HTTP_METRICS_ADDR":                           "http.metrics_addr",
	"NARAD_HTTP_METRICS_UNAUTHENTICATED":                "http.metrics_unauthenticated",
	"NARAD_CLUSTER_ADDR":                                "cluster.addr",
	"NARAD_NODE_ID":                                     "cluster.node_id",
	"NARAD_CLUSTER_PEERS":                               "cluster.peers",
	"NARAD_CLUSTER_ADVERTISE_ADDR":                      "cluster.advertise_addr",
	"NARAD_CLUSTER_INITIAL_MEMBERS":                     "cluster.initial_members",
	"NARAD_CLUSTER_RAFT_SNAPSHOT_THRESHOLD":             "cluster.raft_snapshot_threshold",
	"NARAD_CLUSTER_RAFT_SNAPSHOT_INTERVAL":              "cluster.raft_snapshot_interval",
	"NARAD_CLUSTER_RAFT_TRAILING_LOGS":                  "cluster.raft_trailing_logs",
	"NARAD_DATA_DIR":                                    "storage.data_dir",
	"NARAD_TOPIC_DEFAULT_PARTITIONS":                    "topic.default_partitions",
	"NARAD_TOPIC_MAX_PARTITIONS":                        "topic.max_partitions",
	"NARAD_TOPIC_DEFAULT_RETENTION_AGE_MS":              "topic.default_retention_age_ms",
	"NARAD_TOPIC_DEFAULT_VISIBILITY_TIMEOUT_MS":         "topic.default_visibility_timeout_ms",
	"NARAD_TOPIC_DEFAULT_MAX_IN_FLIGHT_PER_PARTITION":   "topic.default_max_in_flight_per_partition",
	"NARAD_TOPIC_DEFAULT_MAX_ACKED_AHEAD_PER_PARTITION": "topic.default_max_acked_ahead_per_partition",
	"NARAD_FANOUT_MAX_BATCH_RECORDS":                    "fanout.max_batch_records",
	"NARAD_FANOUT_MAX_BATCH_BYTES":                      "fanout.max_batch_bytes",
	"NARAD_FANOUT_LINGER_MS":                            "fanout.linger_ms",
	"NARAD_REMOTES_ALLOWED_HOSTS":                       "remotes.allowed_hosts",
	"NARAD_REMOTES_ALLOWED_PORTS":                       "remotes.allowed_ports",
	"NARAD_REMOTES_ALLOW_ADDRESSES":                     "remotes.allow_addresses",
	"NARAD_REMOTES_MAX_HELD_BYTES":                      "remotes.max_held_bytes",
	"NARAD_REMOTES_API_HOP_ENCRYPTED":                   "remotes.api_hop_encrypted",
	"NARAD_LOG_LEVEL":                                   "log.level",
	"NARAD_LOG_FORMAT":                                  "log.format",
	"NARAD_SECURITY_ENABLED":                            "security.enabled",
	"NARAD_CLUSTER_TLS_CERT_FILE":                       "security.cluster_tls_cert_file",
	"NARAD_CLUSTER_TLS_KEY_FILE":                        "security.cluster_tls_key_file",
	"NARAD_CLUSTER_TLS_CA_FILE":                         "security.cluster_tls_ca_file",
	"NARAD_SECURITY_ALLOW_PLAINTEXT_RAFT":               "security.allow_plaintext_raft",
	"NARAD_SECURITY_ALLOW_INSECURE_CLUSTER":             "security.allow_insecure_cluster",
	"NARAD_SECURITY_ALLOW_LEGACY_CLUSTER_AUTH":          "security.allow_legacy_cluster_auth",
}

func applyEnv(cfg *Config, lookup func(string) (string, bool)) error {
	var errs []error
	for _, name := range sortedKeys(envKeys) {
		if v, ok := lookup(name); ok {
			if err := setValue(cfg, envKeys[name], v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			}
		}
	}
	cfg.Secrets.AdminPassword, _ = lookup("NARAD_ADMIN_PASSWORD")
	cfg.Secrets.ClusterSecret, _ = lookup("NARAD_CLUSTER_SECRET")
	cfg.Secrets.ClusterSecretPrevious, _ = lookup("NARAD_CLUSTER_SECRET_PREVIOUS")
	return errors.Join(errs...)
}

// applyFlags applies flag values by setting key; "port" and "cluster-port"
// shorthands are expanded by the caller into http.addr and cluster.addr.
func applyFlags(cfg *Config, flags map[string]string) error {
	var errs []error
	for _, key := range sortedKeys(flags) {
		if err := setValue(cfg, key, flags[key]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// PortAddr turns a --port style number into a listen address ":N".
func PortAddr(port string) string {
	if strings.HasPrefix(port, ":") {
		return port
	}
	return ":" + port
}
