package bootstrap

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/narad/narad/adapters/loopbackport"
	"github.com/narad/narad/bootstrap/config"
)

// freePort returns a loopback port below the ephemeral range, free on TCP
// and UDP a moment ago, that no other test of this process was given: one
// node's HTTP and cluster addresses must differ.
func freePort(t *testing.T) int { return loopbackport.Pick(t, 1) }

func devConfig(t *testing.T) config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.HTTP.Addr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg.Cluster.Addr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg.Cluster.NodeID = "n1"
	cfg.Storage.DataDir = t.TempDir()
	cfg.Security.Enabled = false
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// ensure that the fx graph is complete and acyclic.
func TestGraphValidates(t *testing.T) {
	p := Params{Config: devConfig(t), Log: zap.NewNop(), Start: time.Now()}
	if err := fx.ValidateApp(nodeOptions(p)); err != nil {
		t.Fatal(err)
	}
}

// ensure that the secured graph (authenticator, users, root seeding) is
// complete too.
func TestSecuredGraphValidates(t *testing.T) {
	cfg := devConfig(t)
	cfg.Security.Enabled = true
	cfg.Secrets.AdminPassword = "pw"
	if err := fx.ValidateApp(nodeOptions(Params{Config: cfg, Log: zap.NewNop(), Start: time.Now()})); err != nil {
		t.Fatal(err)
	}
}

// ensure that the generated root password is written whole, mode 0600,
// replacing what was there.
func TestWriteSecretFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", adminPasswordFile)
	for _, pw := range []string{"first", "second"} {
		if err := writeSecretFile(path, pw); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		st, serr := os.Stat(path)
		if err != nil || serr != nil || string(b) != pw+"\n" || st.Mode().Perm() != 0o600 {
			t.Fatalf("%q mode %v (%v %v)", b, st.Mode().Perm(), err, serr)
		}
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), adminPasswordFile+".tmp-*"))
	if len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

func getJSON(url string) (int, map[string]any, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	return resp.StatusCode, m, nil
}

// ensure that a single node starts on an empty data dir, reports healthy at once and ready after catch-up, and stops cleanly.
func TestSingleNodeStartsAndStops(t *testing.T) {
	cfg := devConfig(t)
	app, err := NewNode(Params{Config: cfg, Log: zap.NewNop(), Start: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatal(err)
	}
	base := "http://" + cfg.HTTP.Addr
	if code, m, err := getJSON(base + "/healthz"); err != nil || code != 200 || m["status"] != "ok" {
		t.Fatalf("healthz %d %v %v", code, m, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, _, err := getJSON(base + "/readyz")
		if err == nil && code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never ready: %d %v", code, err)
		}
		time.Sleep(20 * time.Millisecond) // polling an external process state with a deadline
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, series := range []string{"narad_ingress_wal_failed 0", "narad_ingress_dispatch_backlog_records 0", "narad_ingress_dispatch_busy_owners 0", "narad_topics_total 0", "narad_open_partition_logs 0", `narad_raft_state{state="leader"} 1`, "narad_raft_has_leader 1", "go_goroutines"} {
		if !strings.Contains(string(body), series) {
			t.Errorf("/metrics lacks %q", series)
		}
	}
	if err := app.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// ensure that a node whose port is taken fails to start with the cause,
// and that fx does not log the same failure three more times (the caller
// reports it once).
func TestStartOnATakenPortLogsNoFxErrors(t *testing.T) {
	cfg := devConfig(t)
	ln, err := net.Listen("tcp", cfg.HTTP.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	core, logs := observer.New(zap.WarnLevel)
	app, err := NewNode(Params{Config: cfg, Log: zap.New(core), Start: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = app.Start(ctx)
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("start on a taken port: %v", err)
	}
	for _, e := range logs.All() {
		if e.LoggerName == "fx" {
			t.Errorf("fx logged %q at %v", e.Message, e.Level)
		}
	}
}
