package bootstrap

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Ensure that a node started over a data directory holding a deleted
// topic's directory and a quarantine reclaims both once the leader (itself)
// confirms, and keeps nothing else from starting (internals.md §9.8).
func TestStartupOrphanSweepReclaimsDeletedTopics(t *testing.T) {
	cfg := devConfig(t)
	topicsDir := filepath.Join(cfg.Storage.DataDir, "topics")
	for _, d := range []string{"deleted/p00000", "orders.stale-0123456789abcdef/p00001"} {
		if err := os.MkdirAll(filepath.Join(topicsDir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(topicsDir, "deleted", "incarnation"), []byte("00000000000000aa"), 0o600); err != nil {
		t.Fatal(err)
	}
	runNode(t, cfg)
	deadline := time.Now().Add(20 * time.Second)
	for {
		left, err := os.ReadDir(topicsDir)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("left after the sweep: %v", left)
		}
		time.Sleep(50 * time.Millisecond) // polling the node's disk, bounded by the deadline
	}
}
