// Package check renders the Narad Helm chart (../narad) through Helm's Go
// library, client-only (the `helm template` path: no cluster is contacted),
// and checks the manifests it produces.
package check

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"helm.sh/helm/v4/pkg/action"
	chartcommon "helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/loader"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
)

const (
	chartDir    = "../narad"
	releaseName = "narad"
	namespace   = "brokers"
	// The values a default install must give: the chart refuses to invent
	// the cluster secret and the admin password.
	testClusterSecret = "0123456789abcdef0123456789abcdef"
	testAdminPassword = "admin-password-for-tests"
	// The Kubernetes version rendered for. Client-only, Helm otherwise
	// assumes the version its client library was built as (v1.20 in a
	// test binary), below the chart's kubeVersion.
	kubeVersion = "v1.31.0"
)

// requiredValues are the smallest values a default install renders with.
func requiredValues() map[string]any {
	return map[string]any{"security": map[string]any{
		"clusterSecret": testClusterSecret,
		"adminPassword": testAdminPassword,
	}}
}

// fullValues reads testdata/full-values.yaml, which sets every option.
func fullValues(t *testing.T) map[string]any {
	t.Helper()
	v, err := chartcommon.ReadValuesFile(filepath.Join("testdata", "full-values.yaml"))
	if err != nil {
		t.Fatalf("read full values: %v", err)
	}
	return v
}

// with returns a deep copy of base with one dotted key set.
func with(base map[string]any, key string, value any) map[string]any {
	out := deepCopy(base)
	m := out
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = value
	return out
}

func deepCopy(in map[string]any) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		if m, ok := v.(map[string]any); ok {
			out[k] = deepCopy(m)
			continue
		}
		out[k] = v
	}
	return out
}

// renderChart renders the chart as `helm template` would, with schema
// validation on, and returns the release (manifest and notes).
func renderChart(vals map[string]any) (*releasev1.Release, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return nil, fmt.Errorf("load chart: %w", err)
	}
	install := action.NewInstall(action.NewConfiguration())
	install.DryRunStrategy = action.DryRunClient // client-only: no cluster
	install.ReleaseName = releaseName
	install.Namespace = namespace
	install.Replace = true
	if install.KubeVersion, err = chartcommon.ParseKubeVersion(kubeVersion); err != nil {
		return nil, err
	}
	rel, err := install.Run(chrt, vals)
	if err != nil {
		return nil, err
	}
	r, ok := rel.(*releasev1.Release)
	if !ok {
		return nil, fmt.Errorf("release is a %T", rel)
	}
	return r, nil
}

// manifests is one render decoded into typed objects.
type manifests struct {
	notes           string
	statefulSets    []appsv1.StatefulSet
	services        map[string]corev1.Service
	pdbs            []policyv1.PodDisruptionBudget
	secrets         []corev1.Secret
	serviceMonitors []unstructured.Unstructured
}

var docSeparator = regexp.MustCompile(`(?m)^---\s*$`)

// render renders vals and decodes every document strictly: a field the
// typed struct does not know (a misspelt key in a template) fails the test.
func render(t *testing.T, vals map[string]any) manifests {
	t.Helper()
	rel, err := renderChart(vals)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	m := manifests{notes: rel.Info.Notes, services: map[string]corev1.Service{}}
	for _, doc := range docSeparator.Split(rel.Manifest, -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatalf("decode kind: %v\n%s", err, doc)
		}
		switch tm.APIVersion + "/" + tm.Kind {
		case "apps/v1/StatefulSet":
			m.statefulSets = append(m.statefulSets, decode[appsv1.StatefulSet](t, doc))
		case "v1/Service":
			svc := decode[corev1.Service](t, doc)
			m.services[svc.Name] = svc
		case "policy/v1/PodDisruptionBudget":
			m.pdbs = append(m.pdbs, decode[policyv1.PodDisruptionBudget](t, doc))
		case "v1/Secret":
			m.secrets = append(m.secrets, decode[corev1.Secret](t, doc))
		case "monitoring.coreos.com/v1/ServiceMonitor":
			var u unstructured.Unstructured
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				t.Fatalf("decode ServiceMonitor: %v", err)
			}
			m.serviceMonitors = append(m.serviceMonitors, u)
		default:
			t.Fatalf("unexpected manifest %s %s:\n%s", tm.APIVersion, tm.Kind, doc)
		}
	}
	return m
}

func decode[T any](t *testing.T, doc string) T {
	t.Helper()
	var v T
	if err := yaml.UnmarshalStrict([]byte(doc), &v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, doc)
	}
	return v
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// statefulSet returns the only StatefulSet and its narad container.
func (m manifests) statefulSet(t *testing.T) (appsv1.StatefulSet, corev1.Container) {
	t.Helper()
	if len(m.statefulSets) != 1 {
		t.Fatalf("want 1 StatefulSet, got %d", len(m.statefulSets))
	}
	sts := m.statefulSets[0]
	cs := sts.Spec.Template.Spec.Containers
	if len(cs) != 1 || cs[0].Name != "narad" {
		t.Fatalf("want one container named narad, got %+v", cs)
	}
	return sts, cs[0]
}

// service returns the Service of that name or fails.
func (m manifests) service(t *testing.T, name string) corev1.Service {
	t.Helper()
	svc, ok := m.services[name]
	if !ok {
		t.Fatalf("no Service %q among %v", name, slices.Sorted(maps.Keys(m.services)))
	}
	return svc
}

// env returns the container's variables by name; a name set twice fails.
func env(t *testing.T, c corev1.Container) map[string]corev1.EnvVar {
	t.Helper()
	out := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		if _, dup := out[e.Name]; dup {
			t.Errorf("env %s set twice", e.Name)
		}
		out[e.Name] = e
	}
	return out
}

// envValue returns a plain variable's value or fails when it is missing.
func envValue(t *testing.T, c corev1.Container, name string) string {
	t.Helper()
	e, ok := env(t, c)[name]
	if !ok {
		t.Fatalf("env %s not set", name)
	}
	if e.ValueFrom != nil {
		t.Fatalf("env %s comes from %+v, want a plain value", name, e.ValueFrom)
	}
	return e.Value
}
