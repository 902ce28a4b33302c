package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "narad.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// loopbackOK is the smallest environment a default config validates in.
var loopbackOK = map[string]string{"NARAD_CLUSTER_ADDR": "127.0.0.1:7943"}

// ensure that defaults are those of api.md §6.1.
func TestDefaults(t *testing.T) {
	cfg, err := Load(Source{Env: env(loopbackOK)})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HTTP.Addr != ":7942" || cfg.HTTP.MaxConsumeWait.D() != 10*time.Second || cfg.Topic.DefaultPartitions != 3 ||
		cfg.Topic.MaxPartitions != 108 || cfg.Topic.DefaultRetentionAgeMs != 604_800_000 || cfg.Storage.Codec != "none" ||
		cfg.Storage.CompressionLevel != "fastest" || !cfg.Security.Enabled || cfg.Log.Format != "json" {
		t.Fatalf("unexpected defaults: %s", cfg)
	}
}

// ensure that later layers win: file over defaults, env over file, flags over env.
func TestLayering(t *testing.T) {
	file := writeFile(t, `{"http":{"addr":":1000","max_consume_wait":"5s"},"storage":{"codec":"zstd"}}`)
	cfg, err := Load(Source{
		File:  file,
		Env:   env(map[string]string{"NARAD_HTTP_ADDR": ":2000", "NARAD_CLUSTER_ADDR": "127.0.0.1:7943", "NARAD_CLUSTER_SECRET": "s3cret"}),
		Flags: map[string]string{"http.addr": ":3000"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HTTP.Addr != ":3000" || cfg.HTTP.MaxConsumeWait.D() != 5*time.Second || cfg.Storage.Codec != "zstd" || cfg.Secrets.ClusterSecret != "s3cret" {
		t.Fatalf("layering wrong: %+v", cfg)
	}
}

// ensure that the file is strict: unknown keys, internal storage keys and bare-number durations are refused by name.
func TestFileIsStrict(t *testing.T) {
	cases := map[string]string{
		`{"http":{"adr":":1"}}`:               "http.adr is not a known setting",
		`{"nope":{}}`:                         "nope is not a known setting",
		`{"storage":{"fsync":"always"}}`:      "storage.fsync is an internal setting and cannot be configured",
		`{"http":{"read_timeout":10}}`:        "http.read_timeout: want a duration string",
		`{"http":{"max_header_bytes":"big"}}`: "http.max_header_bytes",
		`[1,2]`:                               "not a JSON object",
	}
	for body, want := range cases {
		_, err := Load(Source{File: writeFile(t, body), Env: env(loopbackOK)})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to contain %q", body, err, want)
		}
	}
}

// ensure that validation reports every violated rule at once, each naming its setting.
func TestValidationJoinsProblems(t *testing.T) {
	file := writeFile(t, `{"http":{"max_consume_wait":"20s"},"topic":{"default_partitions":2,"default_retention_age_ms":1000},"storage":{"idle_log_eviction_ms":5}}`)
	_, err := Load(Source{File: file, Env: env(loopbackOK)})
	if err == nil {
		t.Fatal("invalid config accepted")
	}
	for _, want := range []string{
		"http.max_consume_wait (20s) must be <= http.shutdown_grace (10s)",
		"topic.default_partitions (2)",
		"topic.default_retention_age_ms (1000) must be 0 or >= 3600000",
		"storage.idle_log_eviction_ms (5) must be 0 or >= 60000",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// ensure that cluster and security rules of api.md §6.3 hold.
func TestClusterAndSecurityRules(t *testing.T) {
	peers := "a@10.0.0.1:7943,b@10.0.0.2:7943,c@10.0.0.3:7943"
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"secure_single_node_needs_loopback_raft", map[string]string{"NARAD_CLUSTER_ADDR": "10.1.2.3:7943"}, "which is not a loopback address"},
		{"secure_single_node_advertised_elsewhere", map[string]string{"NARAD_CLUSTER_ADVERTISE_ADDR": "10.1.2.3:7943"}, "binds Raft on 10.1.2.3:7943"},
		{"secure_cluster_needs_secret", map[string]string{"NARAD_CLUSTER_PEERS": peers, "NARAD_NODE_ID": "a", "NARAD_SECURITY_ALLOW_PLAINTEXT_RAFT": "true"}, "NARAD_CLUSTER_SECRET is required"},
		{"insecure_cluster_needs_opt_in", map[string]string{"NARAD_CLUSTER_PEERS": peers, "NARAD_NODE_ID": "a", "NARAD_SECURITY_ENABLED": "false"}, "security.allow_insecure_cluster is required"},
		{"peers_need_self", map[string]string{"NARAD_CLUSTER_PEERS": peers, "NARAD_NODE_ID": "z", "NARAD_SECURITY_ENABLED": "false", "NARAD_SECURITY_ALLOW_INSECURE_CLUSTER": "1"}, "no entry for this node"},
		{"too_few_peers", map[string]string{"NARAD_CLUSTER_PEERS": "a@h:1", "NARAD_NODE_ID": "a", "NARAD_SECURITY_ENABLED": "false", "NARAD_SECURITY_ALLOW_INSECURE_CLUSTER": "true"}, "at least 3"},
		{"malformed_peer", map[string]string{"NARAD_CLUSTER_PEERS": "a-h:1"}, "want id@host:port"},
		{"bad_env_duration", map[string]string{"NARAD_HTTP_READ_TIMEOUT": "10", "NARAD_CLUSTER_ADDR": "127.0.0.1:1"}, "NARAD_HTTP_READ_TIMEOUT"},
		{"same_addrs", map[string]string{"NARAD_CLUSTER_ADDR": ":7942", "NARAD_SECURITY_ENABLED": "false"}, "must differ from http.addr"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(Source{Env: env(c.env)})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
	for _, addr := range []string{"", ":7943", "0.0.0.0:9000", "127.0.0.2:7943"} {
		single := map[string]string{}
		if addr != "" {
			single["NARAD_CLUSTER_ADDR"] = addr
		}
		if _, err := Load(Source{Env: env(single)}); err != nil {
			t.Fatalf("secured single node with cluster.addr %q: %v (Raft binds loopback)", addr, err)
		}
	}
	ok := map[string]string{"NARAD_CLUSTER_PEERS": peers, "NARAD_NODE_ID": "b", "NARAD_SECURITY_ENABLED": "false", "NARAD_SECURITY_ALLOW_INSECURE_CLUSTER": "true"}
	cfg, err := Load(Source{Env: env(ok)})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Cluster.Peers) != 3 || cfg.Cluster.Peers[1] != (Peer{ID: "b", Addr: "10.0.0.2:7943"}) {
		t.Fatalf("peers parsed as %+v", cfg.Cluster.Peers)
	}
}

// ensure that secrets never come from the file and never print.
func TestSecretsStayOutOfFileAndLogs(t *testing.T) {
	if _, err := Load(Source{File: writeFile(t, `{"security":{"cluster_secret":"x"}}`), Env: env(loopbackOK)}); err == nil {
		t.Fatal("a secret was accepted from the file")
	}
	cfg, err := Load(Source{Env: env(map[string]string{"NARAD_CLUSTER_ADDR": "127.0.0.1:1", "NARAD_ADMIN_PASSWORD": "hunter2"})})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Secrets.AdminPassword != "hunter2" || strings.Contains(cfg.String(), "hunter2") {
		t.Fatalf("secret handling wrong: %q / %s", cfg.Secrets.AdminPassword, cfg)
	}
}

// ensure that every environment variable names a real setting.
func TestEveryEnvKeyIsASetting(t *testing.T) {
	for name, key := range envKeys {
		cfg := Default()
		section, field, _ := strings.Cut(key, ".")
		if _, ok := jsonFields(sectionTargets(&cfg)[section])[field]; !ok {
			t.Errorf("%s maps to unknown setting %s", name, key)
		}
	}
}
