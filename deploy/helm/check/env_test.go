package check

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// configDoc is Narad's configuration reference, the list of every NARAD_*
// variable a node reads.
const configDoc = "../../../docs/configuration.md"

var envInTable = regexp.MustCompile("`(NARAD_[A-Z0-9_]+)`")

// documentedEnv returns the NARAD_* names in the tables of configDoc.
func documentedEnv(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(configDoc)
	if err != nil {
		t.Fatalf("read %s: %v", configDoc, err)
	}
	names := map[string]bool{}
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "|") {
			continue
		}
		for _, m := range envInTable.FindAllStringSubmatch(line, -1) {
			names[m[1]] = true
		}
	}
	// Guard the parser: the reference lists about fifty variables,
	// among them the ones every cluster needs.
	for _, must := range []string{"NARAD_HTTP_ADDR", "NARAD_CLUSTER_PEERS", "NARAD_NODE_ID", "NARAD_CLUSTER_SECRET", "NARAD_ADMIN_PASSWORD"} {
		if !names[must] {
			t.Fatalf("%s not found in %s: has its table changed shape?", must, configDoc)
		}
	}
	if len(names) < 40 {
		t.Fatalf("only %d variables parsed from %s", len(names), configDoc)
	}
	return names
}

// TestEnvIsDocumented: every NARAD_* variable the chart sets, under every
// combination of options the tests use, is one Narad reads. A misspelt
// variable would otherwise be ignored without a word.
func TestEnvIsDocumented(t *testing.T) {
	documented := documentedEnv(t)
	renders := map[string]map[string]any{
		"default":            requiredValues(),
		"full":               fullValues(t),
		"single node":        with(requiredValues(), "replicas", 1),
		"security off":       {"security": map[string]any{"enabled": false}},
		"metrics open":       with(requiredValues(), "metrics.unauthenticated", true),
		"raft TLS, 7 nodes":  with(with(requiredValues(), "security.raftTLS.existingSecret", "tls"), "replicas", 7),
		"security off, solo": {"replicas": 1, "security": map[string]any{"enabled": false}},
	}
	seen := map[string]bool{}
	for name, vals := range renders {
		_, c := render(t, vals).statefulSet(t)
		for _, e := range c.Env {
			if !strings.HasPrefix(e.Name, "NARAD_") {
				continue
			}
			seen[e.Name] = true
			if !documented[e.Name] {
				t.Errorf("%s: the chart sets %s, which %s does not list", name, e.Name, configDoc)
			}
		}
	}
	// The variables the chart's own templates can set (the full values add
	// a few through extraEnv); a new one should be added here on purpose.
	want := []string{
		"NARAD_ADMIN_PASSWORD", "NARAD_CLUSTER_ADDR", "NARAD_CLUSTER_INITIAL_MEMBERS", "NARAD_CLUSTER_PEERS",
		"NARAD_CLUSTER_SECRET", "NARAD_CLUSTER_TLS_CA_FILE", "NARAD_CLUSTER_TLS_CERT_FILE", "NARAD_CLUSTER_TLS_KEY_FILE",
		"NARAD_DATA_DIR", "NARAD_HTTP_ADDR", "NARAD_HTTP_MAX_CONNECTIONS", "NARAD_HTTP_METRICS_UNAUTHENTICATED",
		"NARAD_LOG_LEVEL", "NARAD_NODE_ID", "NARAD_SECURITY_ALLOW_INSECURE_CLUSTER", "NARAD_SECURITY_ALLOW_PLAINTEXT_RAFT",
		"NARAD_SECURITY_ENABLED", "NARAD_TOPIC_DEFAULT_RETENTION_AGE_MS",
	}
	var got []string
	for name := range seen {
		got = append(got, name)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("variables set across the renders:\n got %v\nwant %v", got, want)
	}
}
