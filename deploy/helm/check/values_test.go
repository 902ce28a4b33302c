package check

import (
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	chartcommon "helm.sh/helm/v4/pkg/chart/common"
)

// TestBadValuesFailRendering: values.schema.json and the chart's own checks
// refuse values Narad could not run with, naming what is wrong.
func TestBadValuesFailRendering(t *testing.T) {
	base := requiredValues()
	cases := []struct {
		name string
		vals map[string]any
		want string // part of the error
	}{
		{"zero replicas", with(base, "replicas", 0), "replicas"},
		{"negative replicas", with(base, "replicas", -3), "replicas"},
		{"replicas as a string", with(base, "replicas", "3"), "replicas"},
		{"two replicas", with(base, "replicas", 2), "at least 3 peers"},
		{"unknown top-level key", with(base, "replica", 3), "replica"},
		{"unknown nested key", with(base, "security.enable", false), "enable"},
		{"no cluster secret", with(base, "security.clusterSecret", ""), "security.clusterSecret is required"},
		{"no admin password", with(base, "security.adminPassword", ""), "security.adminPassword is required"},
		{"short cluster secret", with(base, "security.clusterSecret", "short"), "clusterSecret"},
		{"no values at all", map[string]any{}, "security.clusterSecret is required"},
		{"secured Raft without TLS", with(base, "security.allowPlaintextRaft", false), "raftTLS"},
		{"scrape without credentials", with(base, "serviceMonitor.enabled", true), "serviceMonitor.basicAuth.secretName"},
		{"PDB of zero", with(base, "podDisruptionBudget.maxUnavailable", 0), "maxUnavailable"},
		{"bad pull policy", with(base, "image.pullPolicy", "Sometimes"), "pullPolicy"},
		{"bad anti-affinity", with(base, "podAntiAffinity", "strict"), "podAntiAffinity"},
		{"port out of range", with(base, "ports.raft", 70000), "raft"},
		{"bad volume size", with(base, "persistence.size", "ten gigs"), "size"},
		{"initial cluster below 3", with(base, "initialClusterSize", 2), "initialClusterSize"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderChart(tc.vals)
			if err == nil {
				t.Fatalf("rendered, want an error mentioning %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

// TestSingleNode: one replica runs without peers (Narad refuses a peers
// list shorter than three).
func TestSingleNode(t *testing.T) {
	m := render(t, with(requiredValues(), "replicas", 1))
	_, c := m.statefulSet(t)
	e := env(t, c)
	for _, name := range []string{"NARAD_CLUSTER_PEERS", "NARAD_CLUSTER_INITIAL_MEMBERS"} {
		if _, ok := e[name]; ok {
			t.Errorf("%s set for a single node", name)
		}
	}
	if _, ok := e["NARAD_NODE_ID"]; !ok {
		t.Errorf("NARAD_NODE_ID not set")
	}
	// Raft on loopback, which a secured single node may run without TLS.
	if got := envValue(t, c, "NARAD_CLUSTER_ADDR"); got != "127.0.0.1:7943" {
		t.Errorf("NARAD_CLUSTER_ADDR = %q, want loopback", got)
	}
	if _, ok := e["NARAD_SECURITY_ALLOW_PLAINTEXT_RAFT"]; ok {
		t.Errorf("plaintext Raft opt-in on a single node")
	}
	if _, err := renderChart(with(with(requiredValues(), "replicas", 1), "security.allowPlaintextRaft", false)); err != nil {
		t.Errorf("single node without Raft TLS refused: %v", err)
	}
}

// TestSecurityOff: no Secret, no credentials, and the opt-in Narad
// requires to run a cluster without security.
func TestSecurityOff(t *testing.T) {
	m := render(t, map[string]any{"security": map[string]any{"enabled": false}})
	_, c := m.statefulSet(t)
	if len(m.secrets) != 0 {
		t.Errorf("Secret rendered with security off")
	}
	e := env(t, c)
	for _, name := range []string{"NARAD_CLUSTER_SECRET", "NARAD_ADMIN_PASSWORD", "NARAD_SECURITY_ALLOW_PLAINTEXT_RAFT"} {
		if _, ok := e[name]; ok {
			t.Errorf("%s set with security off", name)
		}
	}
	if got := envValue(t, c, "NARAD_SECURITY_ENABLED"); got != "false" {
		t.Errorf("NARAD_SECURITY_ENABLED = %q", got)
	}
	if got := envValue(t, c, "NARAD_SECURITY_ALLOW_INSECURE_CLUSTER"); got != "true" {
		t.Errorf("NARAD_SECURITY_ALLOW_INSECURE_CLUSTER = %q", got)
	}
	if !strings.Contains(m.notes, "SECURITY IS OFF") {
		t.Errorf("NOTES.txt does not warn that security is off")
	}
}

// TestScrapeWithoutCredentials: with unauthenticated metrics the
// ServiceMonitor needs no basic auth, and Narad is told so.
func TestScrapeWithoutCredentials(t *testing.T) {
	vals := with(with(requiredValues(), "serviceMonitor.enabled", true), "metrics.unauthenticated", true)
	m := render(t, vals)
	_, c := m.statefulSet(t)
	if got := envValue(t, c, "NARAD_HTTP_METRICS_UNAUTHENTICATED"); got != "true" {
		t.Errorf("NARAD_HTTP_METRICS_UNAUTHENTICATED = %q", got)
	}
	if len(m.serviceMonitors) != 1 {
		t.Fatalf("want a ServiceMonitor, got %d", len(m.serviceMonitors))
	}
	if strings.Contains(strings.ToLower(toYAMLString(t, m.serviceMonitors[0].Object)), "basicauth") {
		t.Errorf("basicAuth on an unauthenticated /metrics")
	}
}

// TestHardAntiAffinityAndNoPDB: the other presets render as documented.
func TestHardAntiAffinityAndNoPDB(t *testing.T) {
	vals := with(with(requiredValues(), "podAntiAffinity", "hard"), "podDisruptionBudget.enabled", false)
	m := render(t, vals)
	sts, _ := m.statefulSet(t)
	aff := sts.Spec.Template.Spec.Affinity
	if aff == nil || aff.PodAntiAffinity == nil || len(aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Errorf("want a required pod anti-affinity, got %+v", aff)
	}
	if len(m.pdbs) != 0 {
		t.Errorf("PDB rendered while disabled")
	}
	m = render(t, with(requiredValues(), "podAntiAffinity", ""))
	if sts, _ := m.statefulSet(t); sts.Spec.Template.Spec.Affinity != nil {
		t.Errorf("affinity %+v with the preset off", sts.Spec.Template.Spec.Affinity)
	}
}

// TestLint runs Helm's own chart linter in strict mode (warnings fail).
func TestLint(t *testing.T) {
	lint := action.NewLint()
	lint.Strict = true
	lint.Namespace = namespace
	kv, err := chartcommon.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	lint.KubeVersion = kv
	res := lint.Run([]string{chartDir}, requiredValues())
	for _, msg := range res.Messages {
		t.Logf("lint: %s", msg)
	}
	for _, err := range res.Errors {
		t.Errorf("lint: %v", err)
	}
	if res.TotalChartsLinted != 1 {
		t.Errorf("linted %d charts", res.TotalChartsLinted)
	}
}
