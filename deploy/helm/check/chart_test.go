package check

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// clusterShape is what a render must agree on, taken from the values.
type clusterShape struct {
	fullname, domain string
	replicas         int
	httpPort         int32
	raftPort         int32
}

func TestDefaultValues(t *testing.T) {
	m := render(t, requiredValues())
	shape := clusterShape{fullname: "narad", domain: "cluster.local", replicas: 3, httpPort: 7942, raftPort: 7943}
	sts, c := m.statefulSet(t)
	checkCluster(t, m, shape)

	if len(m.serviceMonitors) != 0 {
		t.Errorf("ServiceMonitor rendered while serviceMonitor.enabled is false")
	}
	// The chart's own Secret holds what the StatefulSet reads.
	if len(m.secrets) != 1 {
		t.Fatalf("want the chart's Secret, got %d secrets", len(m.secrets))
	}
	secret := m.secrets[0]
	want := map[string]string{"NARAD_CLUSTER_SECRET": testClusterSecret, "NARAD_ADMIN_PASSWORD": testAdminPassword}
	for name, value := range want {
		ref := env(t, c)[name].ValueFrom
		if ref == nil || ref.SecretKeyRef == nil {
			t.Fatalf("%s is not read from a Secret", name)
		}
		if ref.SecretKeyRef.Name != secret.Name {
			t.Errorf("%s reads Secret %q, the chart renders %q", name, ref.SecretKeyRef.Name, secret.Name)
		}
		got, ok := secretValue(secret, ref.SecretKeyRef.Key)
		if !ok {
			t.Errorf("%s reads key %q, missing from Secret %s", name, ref.SecretKeyRef.Key, secret.Name)
		} else if got != value {
			t.Errorf("%s = %q in the Secret, want %q", name, got, value)
		}
	}
	if sts.Spec.Template.Annotations["checksum/secret"] == "" {
		t.Errorf("pods do not roll when the chart's Secret changes")
	}
	if got := envValue(t, c, "NARAD_SECURITY_ALLOW_PLAINTEXT_RAFT"); got != "true" {
		t.Errorf("NARAD_SECURITY_ALLOW_PLAINTEXT_RAFT = %q by default", got)
	}
	if c.Image != "narad:0.1.0" {
		t.Errorf("image %q, want the appVersion tag", c.Image)
	}
	// Default soft anti-affinity: one pod per Kubernetes node preferred.
	aff := sts.Spec.Template.Spec.Affinity
	if aff == nil || aff.PodAntiAffinity == nil || len(aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 ||
		len(aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 0 {
		t.Fatalf("want a soft pod anti-affinity by default, got %+v", aff)
	}
	term := aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm
	if term.TopologyKey != "kubernetes.io/hostname" || !selects(t, term.LabelSelector.MatchLabels, sts.Spec.Template.Labels) {
		t.Errorf("anti-affinity term %+v does not keep Narad pods apart per host", term)
	}
	for _, s := range []string{"port-forward svc/narad 7942:7942", "-u admin", "decommission"} {
		if !strings.Contains(m.notes, s) {
			t.Errorf("NOTES.txt lacks %q:\n%s", s, m.notes)
		}
	}
}

func TestFullValues(t *testing.T) {
	m := render(t, fullValues(t))
	shape := clusterShape{fullname: "narad-broker", domain: "example.internal", replicas: 5, httpPort: 8942, raftPort: 8943}
	sts, c := m.statefulSet(t)
	checkCluster(t, m, shape)

	if len(m.secrets) != 0 {
		t.Errorf("a Secret is rendered although security.existingSecret is set")
	}
	for name, key := range map[string]string{"NARAD_CLUSTER_SECRET": "secret", "NARAD_ADMIN_PASSWORD": "root-password"} {
		ref := env(t, c)[name].ValueFrom
		if ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != "narad-credentials" || ref.SecretKeyRef.Key != key {
			t.Errorf("%s = %+v, want key %q of narad-credentials", name, ref, key)
		}
	}
	if _, ok := sts.Spec.Template.Annotations["checksum/secret"]; ok {
		t.Errorf("checksum of a Secret the chart does not render")
	}
	// Raft mutual TLS from the named Secret, and no plaintext opt-in.
	e := env(t, c)
	if _, ok := e["NARAD_SECURITY_ALLOW_PLAINTEXT_RAFT"]; ok {
		t.Errorf("plaintext Raft allowed although raftTLS is set")
	}
	tlsDir := mountPath(t, c, "raft-tls")
	for name, file := range map[string]string{"NARAD_CLUSTER_TLS_CERT_FILE": "tls.crt", "NARAD_CLUSTER_TLS_KEY_FILE": "tls.key", "NARAD_CLUSTER_TLS_CA_FILE": "ca.crt"} {
		if got := envValue(t, c, name); got != tlsDir+"/"+file {
			t.Errorf("%s = %q, want %s/%s", name, got, tlsDir, file)
		}
	}
	if v := volume(t, sts, "raft-tls"); v.Secret == nil || v.Secret.SecretName != "narad-raft-tls" {
		t.Errorf("raft-tls volume %+v, want Secret narad-raft-tls", v)
	}
	// Extra env, after the chart's own.
	if got := envValue(t, c, "NARAD_LOG_LEVEL"); got != "debug" {
		t.Errorf("NARAD_LOG_LEVEL = %q", got)
	}
	if ref := e["NARAD_HTTP_MAX_CONNECTIONS"].ValueFrom; ref == nil || ref.ConfigMapKeyRef == nil {
		t.Errorf("extraEnv valueFrom lost: %+v", e["NARAD_HTTP_MAX_CONNECTIONS"])
	}
	// Resources, scheduling, image, pod metadata.
	if got := c.Resources.Requests[corev1.ResourceCPU]; got.Cmp(resource.MustParse("2")) != 0 {
		t.Errorf("cpu request %s", got.String())
	}
	if got := c.Resources.Limits[corev1.ResourceMemory]; got.Cmp(resource.MustParse("8Gi")) != 0 {
		t.Errorf("memory limit %s", got.String())
	}
	pod := sts.Spec.Template.Spec
	if aff := pod.Affinity; aff == nil || aff.NodeAffinity == nil || aff.PodAntiAffinity != nil {
		t.Errorf("affinity %+v, want the given node affinity replacing the preset", aff)
	}
	if pod.NodeSelector["workload"] != "brokers" || len(pod.Tolerations) != 1 || pod.Tolerations[0].Key != "dedicated" {
		t.Errorf("nodeSelector %v, tolerations %+v", pod.NodeSelector, pod.Tolerations)
	}
	if pod.PriorityClassName != "brokers-critical" || len(pod.ImagePullSecrets) != 1 || *pod.TerminationGracePeriodSeconds != 120 {
		t.Errorf("priority %q, pull secrets %+v, grace %d", pod.PriorityClassName, pod.ImagePullSecrets, *pod.TerminationGracePeriodSeconds)
	}
	if c.Image != "registry.example.com/narad:1.2.3" || c.ImagePullPolicy != corev1.PullAlways {
		t.Errorf("image %q pull %q", c.Image, c.ImagePullPolicy)
	}
	if sts.Spec.Template.Labels["team"] != "messaging" || sts.Spec.Template.Annotations["example.com/team"] != "messaging" {
		t.Errorf("pod labels %v annotations %v", sts.Spec.Template.Labels, sts.Spec.Template.Annotations)
	}
	pvc := sts.Spec.VolumeClaimTemplates[0]
	if pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != "fast-ssd" {
		t.Errorf("storageClassName %v", pvc.Spec.StorageClassName)
	}
	if got := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; got.Cmp(resource.MustParse("50Gi")) != 0 {
		t.Errorf("volume size %s", got.String())
	}
	if c.LivenessProbe.PeriodSeconds != 20 || c.ReadinessProbe.FailureThreshold != 2 || c.StartupProbe.FailureThreshold != 60 {
		t.Errorf("probe settings not applied: %+v %+v %+v", c.LivenessProbe, c.ReadinessProbe, c.StartupProbe)
	}
	if svc := m.service(t, "narad-broker"); svc.Spec.Type != corev1.ServiceTypeLoadBalancer || len(svc.Annotations) != 1 {
		t.Errorf("client Service type %q annotations %v", svc.Spec.Type, svc.Annotations)
	}
	checkServiceMonitor(t, m)
}

// checkCluster asserts what every render of a cluster must hold.
func checkCluster(t *testing.T, m manifests, s clusterShape) {
	t.Helper()
	sts, c := m.statefulSet(t)
	headlessName := s.fullname + "-headless"
	podLabels := sts.Spec.Template.Labels

	if sts.Name != s.fullname || sts.Namespace != namespace {
		t.Errorf("StatefulSet %s/%s, want %s/%s", sts.Namespace, sts.Name, namespace, s.fullname)
	}
	if sts.Spec.Replicas == nil || int(*sts.Spec.Replicas) != s.replicas {
		t.Errorf("replicas %v, want %d", sts.Spec.Replicas, s.replicas)
	}
	if sts.Spec.ServiceName != headlessName {
		t.Errorf("serviceName %q, want %q", sts.Spec.ServiceName, headlessName)
	}
	if sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
		t.Errorf("podManagementPolicy %q: a cluster cannot form one pod at a time", sts.Spec.PodManagementPolicy)
	}
	if !selects(t, sts.Spec.Selector.MatchLabels, podLabels) {
		t.Errorf("selector %v does not match pod labels %v", sts.Spec.Selector.MatchLabels, podLabels)
	}

	// Node id from the pod name (downward API).
	id := env(t, c)["NARAD_NODE_ID"]
	if id.ValueFrom == nil || id.ValueFrom.FieldRef == nil || id.ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("NARAD_NODE_ID = %+v, want the pod name", id)
	}
	// Peers: every pod, by its stable name through the headless Service.
	peers := strings.Split(envValue(t, c, "NARAD_CLUSTER_PEERS"), ",")
	if len(peers) != s.replicas {
		t.Fatalf("%d peers for %d replicas: %v", len(peers), s.replicas, peers)
	}
	for i, p := range peers {
		pod := fmt.Sprintf("%s-%d", s.fullname, i)
		want := fmt.Sprintf("%s@%s.%s.%s.svc.%s:%d", pod, pod, headlessName, namespace, s.domain, s.raftPort)
		if p != want {
			t.Errorf("peer %d = %q, want %q", i, p, want)
		}
	}
	initial := strings.Split(envValue(t, c, "NARAD_CLUSTER_INITIAL_MEMBERS"), ",")
	if want := []string{s.fullname + "-0", s.fullname + "-1", s.fullname + "-2"}; !reflect.DeepEqual(initial, want) {
		t.Errorf("initial members %v, want %v", initial, want)
	}

	// Ports: HTTP/TCP and QUIC/UDP share a number; Raft on its own.
	ports := map[string]corev1.ContainerPort{}
	for _, p := range c.Ports {
		ports[p.Name] = p
	}
	for name, want := range map[string]corev1.ContainerPort{
		"http": {Name: "http", ContainerPort: s.httpPort, Protocol: corev1.ProtocolTCP},
		"quic": {Name: "quic", ContainerPort: s.httpPort, Protocol: corev1.ProtocolUDP},
		"raft": {Name: "raft", ContainerPort: s.raftPort, Protocol: corev1.ProtocolTCP},
	} {
		if ports[name] != want {
			t.Errorf("container port %s = %+v, want %+v", name, ports[name], want)
		}
	}
	if got := listenPort(t, envValue(t, c, "NARAD_HTTP_ADDR")); got != s.httpPort {
		t.Errorf("NARAD_HTTP_ADDR port %d, container port %d", got, s.httpPort)
	}
	if got := listenPort(t, envValue(t, c, "NARAD_CLUSTER_ADDR")); got != s.raftPort {
		t.Errorf("NARAD_CLUSTER_ADDR port %d, container port %d", got, s.raftPort)
	}

	// Probes.
	checkProbe(t, "liveness", c.LivenessProbe, "/healthz")
	checkProbe(t, "readiness", c.ReadinessProbe, "/readyz")
	checkProbe(t, "startup", c.StartupProbe, "/healthz")

	// Data volume: a claim per pod, mounted at /data where Narad writes.
	if len(sts.Spec.VolumeClaimTemplates) != 1 {
		t.Fatalf("want one volume claim template, got %d", len(sts.Spec.VolumeClaimTemplates))
	}
	if claim := sts.Spec.VolumeClaimTemplates[0].Name; mountPath(t, c, claim) != "/data" {
		t.Errorf("claim %s mounted at %q, want /data", claim, mountPath(t, c, claim))
	}
	if got := envValue(t, c, "NARAD_DATA_DIR"); got != "/data" {
		t.Errorf("NARAD_DATA_DIR = %q", got)
	}

	// Runs as the image's user, read-only root, group-owned volume.
	psc, csc := sts.Spec.Template.Spec.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsUser == nil || *psc.RunAsUser != 65532 || psc.RunAsGroup == nil || *psc.RunAsGroup != 65532 ||
		psc.FSGroup == nil || *psc.FSGroup != 65532 {
		t.Errorf("pod securityContext %+v, want uid/gid/fsGroup 65532", psc)
	}
	if csc == nil || csc.ReadOnlyRootFilesystem == nil || !*csc.ReadOnlyRootFilesystem {
		t.Errorf("container securityContext %+v, want readOnlyRootFilesystem", csc)
	}
	if g := sts.Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || *g < 30 {
		t.Errorf("terminationGracePeriodSeconds %v, want >= 30", g)
	}

	// Services.
	headless := m.service(t, headlessName)
	if headless.Spec.ClusterIP != corev1.ClusterIPNone || !headless.Spec.PublishNotReadyAddresses {
		t.Errorf("headless Service clusterIP %q publishNotReadyAddresses %v", headless.Spec.ClusterIP, headless.Spec.PublishNotReadyAddresses)
	}
	checkServicePorts(t, headless, map[string]corev1.ServicePort{
		"http": {Name: "http", Port: s.httpPort, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("http")},
		"quic": {Name: "quic", Port: s.httpPort, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromString("quic")},
		"raft": {Name: "raft", Port: s.raftPort, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("raft")},
	})
	client := m.service(t, s.fullname)
	checkServicePorts(t, client, map[string]corev1.ServicePort{
		"http": {Name: "http", Port: s.httpPort, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("http")},
	})
	for _, svc := range []corev1.Service{headless, client} {
		if !selects(t, svc.Spec.Selector, podLabels) {
			t.Errorf("Service %s selector %v misses the pods %v", svc.Name, svc.Spec.Selector, podLabels)
		}
	}

	// PodDisruptionBudget.
	if len(m.pdbs) != 1 {
		t.Fatalf("want one PodDisruptionBudget, got %d", len(m.pdbs))
	}
	pdb := m.pdbs[0]
	if pdb.Spec.MaxUnavailable == nil || *pdb.Spec.MaxUnavailable != intstr.FromInt32(1) || pdb.Spec.MinAvailable != nil {
		t.Errorf("PDB maxUnavailable %v minAvailable %v, want 1 and unset", pdb.Spec.MaxUnavailable, pdb.Spec.MinAvailable)
	}
	if !selects(t, pdb.Spec.Selector.MatchLabels, podLabels) {
		t.Errorf("PDB selector %v misses the pods", pdb.Spec.Selector.MatchLabels)
	}
}

func checkProbe(t *testing.T, kind string, p *corev1.Probe, path string) {
	t.Helper()
	if p == nil || p.HTTPGet == nil {
		t.Errorf("%s probe %+v, want an HTTP GET", kind, p)
		return
	}
	if p.HTTPGet.Path != path || p.HTTPGet.Port != intstr.FromString("http") {
		t.Errorf("%s probe GET %s on %s, want %s on the http port", kind, p.HTTPGet.Path, p.HTTPGet.Port.String(), path)
	}
}

func checkServicePorts(t *testing.T, svc corev1.Service, want map[string]corev1.ServicePort) {
	t.Helper()
	if len(svc.Spec.Ports) != len(want) {
		t.Errorf("Service %s has %d ports, want %d", svc.Name, len(svc.Spec.Ports), len(want))
	}
	for _, p := range svc.Spec.Ports {
		if p != want[p.Name] {
			t.Errorf("Service %s port %s = %+v, want %+v", svc.Name, p.Name, p, want[p.Name])
		}
	}
}

func checkServiceMonitor(t *testing.T, m manifests) {
	t.Helper()
	if len(m.serviceMonitors) != 1 {
		t.Fatalf("want one ServiceMonitor, got %d", len(m.serviceMonitors))
	}
	sm := m.serviceMonitors[0]
	if sm.GetAPIVersion() != "monitoring.coreos.com/v1" || sm.GetNamespace() != namespace || sm.GetLabels()["release"] != "prometheus" {
		t.Errorf("ServiceMonitor %s %s/%s labels %v", sm.GetAPIVersion(), sm.GetNamespace(), sm.GetName(), sm.GetLabels())
	}
	sel, _ := nested(sm.Object, "spec", "selector", "matchLabels")
	selected := 0
	for _, svc := range m.services {
		if selects(t, toStrings(sel), svc.Labels) {
			selected++
			if svc.Spec.ClusterIP != corev1.ClusterIPNone {
				t.Errorf("ServiceMonitor selects the client Service %s: each pod would be scraped twice, unready ones never", svc.Name)
			}
		}
	}
	if selected != 1 {
		t.Errorf("ServiceMonitor selects %d Services, want the headless one", selected)
	}
	spec, _ := nested(sm.Object, "spec")
	eps, _ := spec["endpoints"].([]any)
	if len(eps) != 1 {
		t.Fatalf("endpoints %v", eps)
	}
	ep := eps[0].(map[string]any)
	if ep["port"] != "http" || ep["path"] != "/metrics" || ep["interval"] != "15s" {
		t.Errorf("endpoint %v, want /metrics on port http every 15s", ep)
	}
	for _, part := range []string{"username", "password"} {
		ref, ok := nested(ep, "basicAuth", part)
		want := map[string]string{"username": "user", "password": "pass"}[part]
		if !ok || ref["name"] != "narad-scrape" || ref["key"] != want {
			t.Errorf("basicAuth.%s = %v, want key %s of narad-scrape", part, ref, want)
		}
	}
}
