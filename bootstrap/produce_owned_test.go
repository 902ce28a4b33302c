package bootstrap

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/wal"
	"github.com/narad/narad/ports"
)

// Ensure that a node commits a single produce for a partition it owns
// straight into the partition's log, writing nothing to its WAL
// (internals.md §3.10), while a batch produce still goes through the WAL.
func TestSingleProduceToAnOwnedPartitionSkipsTheWAL(t *testing.T) {
	cfg := devConfig(t)
	var (
		store ports.MetadataStore
		w     *wal.WAL
	)
	app := fx.New(nodeOptions(Params{Config: cfg, Log: zap.NewNop(), Start: time.Now()}), fx.Populate(&store, &w), fx.StopTimeout(fxStopTimeout))
	if err := app.Err(); err != nil {
		t.Fatal(err)
	}
	base := serveApp(t, app, cfg)
	if code, body := send(t, "POST", base+"/v1/topics", `{"name":"direct","partitions":3}`, jsonCT); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	waitUntil(t, "the partition placed on this node", func() bool {
		row, ok, err := store.Assignment("direct", 0)
		return err == nil && ok && row.Owner == cfg.Cluster.NodeID
	})
	if code, body := send(t, "POST", base+"/v1/topics/direct/produce?partition=0", `{"n":1}`, jsonCT); code != 202 {
		t.Fatalf("produce: %d %s", code, body)
	}
	if n := w.DurableNext(); n != 0 {
		t.Fatalf("the WAL holds %d records after a single produce to an owned partition, want none", n)
	}
	code, got := replay(t, base, "direct", 0, 0)
	if code != 200 || string(got.Payload) != `{"n":1}` {
		t.Fatalf("replay of offset 0: %d %+v, want the produced message", code, got)
	}
	batch := `{"messages":[{"payload":{"n":2}},{"payload":{"n":3}}]}`
	if code, body := send(t, "POST", base+"/v1/topics/direct/produce/batch", batch, jsonCT); code != 202 {
		t.Fatalf("batch produce: %d %s", code, strings.TrimSpace(body))
	}
	if n := w.DurableNext(); n != 2 {
		t.Fatalf("the WAL holds %d records after a batch of 2, want 2", n)
	}
}
