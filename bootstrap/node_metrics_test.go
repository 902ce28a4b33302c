package bootstrap

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/bootstrap/config"
)

// startedNode runs a dev node for the test and returns its base URL.
func startedNode(t *testing.T) string {
	t.Helper()
	return runNode(t, devConfig(t))
}

// runNode starts a node with cfg, stops it at the test's end, and returns
// its base URL once it is ready.
func runNode(t *testing.T, cfg config.Config) string {
	t.Helper()
	app, err := NewNode(Params{Config: cfg, Log: zap.NewNop(), Start: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return serveApp(t, app, cfg)
}

// serveApp starts app, the node graph built for cfg, stops it at the
// test's end, and returns its base URL once it is ready.
func serveApp(t *testing.T, app *fx.App, cfg config.Config) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := app.Stop(stop); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	base := "http://" + cfg.HTTP.Addr
	waitUntil(t, "the node ready", func() bool { code, _, err := getJSON(base + "/readyz"); return err == nil && code == 200 })
	return base
}

func send(t *testing.T, method, url, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// metric returns the value of one exposition line, or -1.
func metric(t *testing.T, base, series string) float64 {
	t.Helper()
	_, body := send(t, "GET", base+"/metrics", "", nil)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

var jsonCT = map[string]string{"Content-Type": "application/json"}

// ensure that the node's /metrics carries narad_, go_ and process_ series, counts requests by route pattern, and counts topics (conformance 3, 5, 6, 207, 224).
func TestNodeMetricsFollowTraffic(t *testing.T) {
	base := startedNode(t)
	for _, name := range []string{"alpha", "beta", "gamma"} {
		if code, body := send(t, "POST", base+"/v1/topics", `{"name":"`+name+`"}`, jsonCT); code != 201 {
			t.Fatalf("create %s: %d %s", name, code, body)
		}
	}
	_, body := send(t, "GET", base+"/metrics", "", nil)
	for _, prefix := range []string{"\nnarad_", "\ngo_", "\nprocess_"} {
		if !strings.Contains(body, prefix) {
			t.Errorf("/metrics has no %s series", strings.TrimSpace(prefix))
		}
	}
	if v := metric(t, base, "narad_topics_total"); v != 3 {
		t.Errorf("narad_topics_total = %v, want 3", v)
	}
	series := `narad_http_requests_total{method="GET",route="GET /v1/topics/{topic}",status="200"}`
	before := max(metric(t, base, series), 0)
	for _, name := range []string{"alpha", "beta", "gamma"} {
		send(t, "GET", base+"/v1/topics/"+name, "", nil)
	}
	if after := metric(t, base, series); after-before != 3 {
		t.Errorf("%s rose by %v, want 3", series, after-before)
	}
	code, _ := send(t, "POST", base+"/v1/topics/alpha/produce/batch", `{"messages":[{"payload":{"a":1}},{"payload":"x"}]}`, jsonCT)
	if code != 202 || metric(t, base, `narad_http_requests_total{method="POST",route="POST /v1/topics/{topic}/produce/batch",status="202"}`) != 1 {
		t.Errorf("batch produce %d not counted once", code)
	}
	code, _ = send(t, "GET", base+"/v1/topics/alpha/consume?max=1&wait=5s", "", map[string]string{"X-Narad-Client": "t"}) // the dispatcher commits asynchronously
	if code != 200 {
		t.Fatalf("consume %d", code)
	}
	age := -1.0
	for _, p := range []string{"0", "1", "2"} {
		if v := metric(t, base, `narad_oldest_unconsumed_message_age_seconds{partition="`+p+`",topic="alpha"}`); v >= 0 {
			age = v
		}
	}
	if age < 0 || age > 60 {
		t.Errorf("oldest unconsumed age of the leased partition = %v, want a small age", age)
	}
	code, _ = send(t, "POST", base+"/v1/topics/alpha/ack", `{"receipt_handles":["0:0:1"]}`, jsonCT)
	if code != 200 || metric(t, base, `narad_http_requests_total{method="POST",route="POST /v1/topics/{topic}/ack",status="200"}`) != 1 {
		t.Errorf("batch ack %d not counted once as 200", code)
	}
}

// ensure that a header block over http.max_header_bytes answers 431 with a body that is not JSON (conformance 158).
func TestOversizedHeadersAnswer431(t *testing.T) {
	base := startedNode(t)
	code, body := send(t, "GET", base+"/healthz", "", map[string]string{"X-Big": strings.Repeat("a", 100_000)})
	if code != http.StatusRequestHeaderFieldsTooLarge || strings.HasPrefix(strings.TrimSpace(body), "{") {
		t.Fatalf("%d %q", code, body)
	}
}
