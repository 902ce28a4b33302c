package bootstrap

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/narad/narad/adapters/vfs"
)

// ensure that a taken Raft port fails the build of the node with one line:
// the cause, the ports Narad uses and the flags that move them, and no
// dependency-injection chain or fx log lines (issue 17).
func TestTakenRaftPortIsReportedInOneLine(t *testing.T) {
	cfg := devConfig(t)
	ln, err := net.Listen("tcp", cfg.Cluster.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	core, logs := observer.New(zap.WarnLevel)
	_, err = NewNode(Params{Config: cfg, Log: zap.New(core), Start: time.Now()})
	if err == nil {
		t.Fatal("a node started on a taken Raft port")
	}
	msg := startFailure(err, cfg).Error()
	for _, want := range []string{"address already in use", cfg.Cluster.Addr, "--cluster-port", "NARAD_CLUSTER_ADDR"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "could not build") || strings.Contains(msg, "\n") {
		t.Errorf("message is not one line of the cause:\n%s", msg)
	}
	for _, e := range logs.All() {
		if e.LoggerName == "fx" {
			t.Errorf("fx logged %q at %v", e.Message, e.Level)
		}
	}
}

// ensure that a second node on a data directory in use is refused before it
// opens anything, with a one-line reason, and that stopping the first frees
// the directory.
func TestSecondNodeOnADataDirectoryInUseIsRefused(t *testing.T) {
	cfg := devConfig(t)
	first, err := NewNode(Params{Config: cfg, Log: zap.NewNop(), Start: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	second := cfg
	second.HTTP.Addr, second.Cluster.Addr = devConfig(t).HTTP.Addr, devConfig(t).Cluster.Addr
	_, err = NewNode(Params{Config: second, Log: zap.NewNop(), Start: time.Now()})
	if !errors.Is(err, vfs.ErrDirLocked) {
		t.Fatalf("second node on %s: %v, want ErrDirLocked", cfg.Storage.DataDir, err)
	}
	if msg := startFailure(err, second).Error(); !strings.Contains(msg, cfg.Storage.DataDir) || !strings.Contains(msg, "NARAD_DATA_DIR") {
		t.Errorf("message does not name the directory and the way out: %s", msg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := first.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := first.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := NewNode(Params{Config: cfg, Log: zap.NewNop(), Start: time.Now()})
	if err != nil {
		t.Fatalf("data directory still locked after the first node stopped: %v", err)
	}
	if err := again.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := again.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}
