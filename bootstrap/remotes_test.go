package bootstrap

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/bootstrap/config"
)

// testClusterSecret is a generated-looking secret (64 hex characters).
const testClusterSecret = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// ensure that a node whose metadata holds a remote stops itself when it is
// started again without a usable cluster secret (api.md §6.3), and runs
// with one.
func TestRemotesStopANodeWithoutItsSecret(t *testing.T) {
	cfg := devConfig(t)
	cfg.Security.Enabled = true
	cfg.Secrets.AdminPassword = "root-password-long-enough"
	cfg.Secrets.ClusterSecret = testClusterSecret
	cfg.Remotes.APIHopEncrypted = true
	cfg.Remotes.AllowAddresses = []string{"127.0.0.0/8"}
	cfg.Remotes.AllowedPorts = []int{8443}
	app := startApp(t, cfg, true)
	body := `{"name":"dr","url":"https://127.0.0.1:8443","username":"replicator","password":"correct-horse-battery-staple-42"}`
	deadline := time.Now().Add(20 * time.Second)
	for { // the root account is seeded beside readiness
		req, _ := http.NewRequest(http.MethodPost, "http://"+cfg.HTTP.Addr+"/v1/remotes", strings.NewReader(body))
		req.SetBasicAuth("admin", cfg.Secrets.AdminPassword)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusCreated {
			break
		}
		if resp.StatusCode != http.StatusUnauthorized || time.Now().After(deadline) {
			t.Fatalf("create: %d", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond) // polling the seeding of an external account with a deadline
	}
	stopApp(t, app)
	cfg.Secrets.ClusterSecret = ""
	app = startApp(t, cfg, false)
	select {
	case sig := <-app.Wait():
		if sig.ExitCode != remotePostureExitCode {
			t.Fatalf("exit code %d", sig.ExitCode)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the node kept running without its cluster secret")
	}
	stopApp(t, app)
}

func startApp(t *testing.T, cfg config.Config, ready bool) *fx.App {
	t.Helper()
	app, err := NewNode(Params{Config: cfg, Log: zap.NewNop(), Start: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if ready {
		waitReady(t, "http://"+cfg.HTTP.Addr)
	}
	return app
}

// waitReady polls /readyz with a deadline.
func waitReady(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, _, err := getJSON(base + "/readyz")
		if err == nil && code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("never ready: %d %v", code, err)
		}
		time.Sleep(20 * time.Millisecond) // polling an external process state with a deadline
	}
}

func stopApp(t *testing.T, app *fx.App) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := app.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}
