package config

import (
	"strings"
	"testing"
)

// ensure that a key this build parses but does not act on is refused when
// set away from its default, naming the key, and accepted at its default.
func TestUnbuiltKeysAreRefusedWhenSet(t *testing.T) {
	base := map[string]string{"NARAD_SECURITY_ENABLED": "false"}
	if _, err := Load(Source{Env: env(base)}); err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
	for key, v := range map[string]string{
		"NARAD_CLUSTER_RAFT_SNAPSHOT_INTERVAL": "300s",
		"NARAD_CLUSTER_RAFT_TRAILING_LOGS":     "500",
	} {
		e := map[string]string{key: v}
		for k, bv := range base {
			e[k] = bv
		}
		_, err := Load(Source{Env: env(e)})
		if err == nil || !strings.Contains(err.Error(), "is not supported by this build yet") {
			t.Fatalf("%s=%s: %v, want a refusal naming the key", key, v, err)
		}
	}
	c := Default()
	c.Storage.ColdRetentionWalkMs = 120_000
	c.Storage.DataDir = "/tmp/x"
	var got []string
	c.validateUnbuilt(func(f string, args ...any) { got = append(got, args[0].(string)) })
	if len(got) != 1 || got[0] != "storage.cold_retention_walk_ms" {
		t.Fatalf("refused %v, want storage.cold_retention_walk_ms", got)
	}
}

// ensure that storage.ingress_wal_prealloc, now built, loads when set.
func TestIngressWALPreallocLoads(t *testing.T) {
	c, err := Load(Source{File: writeFile(t, `{"storage":{"ingress_wal_prealloc":true}}`),
		Env: env(map[string]string{"NARAD_SECURITY_ENABLED": "false"})})
	if err != nil {
		t.Fatalf("storage.ingress_wal_prealloc=true refused: %v", err)
	}
	if !c.Storage.IngressWALPrealloc {
		t.Fatal("storage.ingress_wal_prealloc=true did not take")
	}
}

// ensure that http.metrics_addr, now built, loads when set.
func TestMetricsAddrLoads(t *testing.T) {
	c, err := Load(Source{Env: env(map[string]string{"NARAD_SECURITY_ENABLED": "false", "NARAD_HTTP_METRICS_ADDR": "127.0.0.1:9100"})})
	if err != nil || c.HTTP.MetricsAddr != "127.0.0.1:9100" {
		t.Fatalf("metrics_addr: %+v %v", c.HTTP.MetricsAddr, err)
	}
}
