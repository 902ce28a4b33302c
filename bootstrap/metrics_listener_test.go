package bootstrap

import (
	"fmt"
	"strings"
	"testing"
)

// ensure that with http.metrics_addr set, /metrics, /healthz and /readyz
// answer 200 without credentials on that listener, and /metrics on the API
// port answers 404 (conformance 161).
func TestMetricsListenerOfItsOwn(t *testing.T) {
	cfg := devConfig(t)
	cfg.HTTP.MetricsAddr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	base := runNode(t, cfg)
	side := "http://" + cfg.HTTP.MetricsAddr
	for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
		if code, _ := send(t, "GET", side+path, "", nil); code != 200 {
			t.Fatalf("GET %s on the metrics listener: %d, want 200", path, code)
		}
	}
	if _, body := send(t, "GET", side+"/metrics", "", nil); !strings.Contains(body, "narad_http_requests_total") {
		t.Fatalf("the metrics listener's exposition lacks the API's series:\n%.300s", body)
	}
	if code, _ := send(t, "GET", base+"/metrics", "", nil); code != 404 {
		t.Fatalf("GET /metrics on the API port: %d, want 404", code)
	}
	if code, _ := send(t, "GET", base+"/healthz", "", nil); code != 200 {
		t.Fatalf("GET /healthz on the API port: %d, want 200", code)
	}
}

// ensure that without http.metrics_addr /metrics stays on the API port.
func TestMetricsOnTheAPIPortByDefault(t *testing.T) {
	base := startedNode(t)
	if code, body := send(t, "GET", base+"/metrics", "", nil); code != 200 || !strings.Contains(body, "narad_") {
		t.Fatalf("GET /metrics on the API port: %d %.200s", code, body)
	}
}
