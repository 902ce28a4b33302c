package check

import (
	"fmt"
	"net"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// nested follows path through maps of an unstructured object.
func nested(obj map[string]any, path ...string) (map[string]any, bool) {
	cur := obj
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

func toStrings(m map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = fmt.Sprint(v)
	}
	return out
}

// selects reports whether a non-empty equality selector matches set.
func selects(t *testing.T, selector, set map[string]string) bool {
	t.Helper()
	return len(selector) > 0 && labels.SelectorFromSet(selector).Matches(labels.Set(set))
}

func listenPort(t *testing.T, addr string) int32 {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("listen address %q: %v", addr, err)
	}
	n, err := strconv.ParseInt(port, 10, 32)
	if err != nil {
		t.Fatalf("listen address %q: %v", addr, err)
	}
	return int32(n)
}

func mountPath(t *testing.T, c corev1.Container, volume string) string {
	t.Helper()
	for _, vm := range c.VolumeMounts {
		if vm.Name == volume {
			return vm.MountPath
		}
	}
	t.Fatalf("volume %s is not mounted", volume)
	return ""
}

func volume(t *testing.T, sts appsv1.StatefulSet, name string) corev1.Volume {
	t.Helper()
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no volume %s", name)
	return corev1.Volume{}
}

func secretValue(s corev1.Secret, key string) (string, bool) {
	if v, ok := s.StringData[key]; ok {
		return v, true
	}
	// Data holds the decoded bytes: the manifest's base64 is undone by the
	// []byte field's JSON decoding.
	v, ok := s.Data[key]
	return string(v), ok
}

func toYAMLString(t *testing.T, v any) string {
	t.Helper()
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(out)
}
