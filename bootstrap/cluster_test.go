package bootstrap

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/narad/narad/adapters/quicpeer"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// addrs resolves node ids to fixed addresses.
type addrs map[string]string

func (a addrs) Addr(node string) (string, bool) {
	v, ok := a[node]
	return v, ok
}

// ensure that a node answers op 8 (TopicPartitionStats) for the partitions
// it owns over node RPC, on its client port over UDP, and refuses an
// incarnation it does not hold (internals.md §6.6, §10.3).
func TestNodeServesPartitionStats(t *testing.T) {
	cfg := devConfig(t)
	secret := "cluster-secret-bootstrap-0123456789"
	cfg.Secrets.ClusterSecret = secret
	base := runNode(t, cfg)
	ctx := context.Background()
	if code, body := send(t, "POST", base+"/v1/topics", `{"name":"stats"}`, jsonCT); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body := send(t, "POST", base+"/v1/topics/stats/produce?partition=1", `{"n":1}`, jsonCT); code != 202 {
		t.Fatalf("produce: %d %s", code, body)
	}

	c, err := quicpeer.NewClient(quicpeer.ClientOptions{Secret: []byte(secret), Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := quicpeer.NewPeers(c, addrs{"n1": cfg.HTTP.Addr})
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := p.PartitionStats(ctx, "n1", "stats", "", []int32{0, 1, 2})
		if err == nil && len(st) == 3 && st[1].HighWatermark == 1 {
			break // the accepted record reached its partition
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats never showed the record: %+v %v", st, err)
		}
		time.Sleep(20 * time.Millisecond) // polling the node, bounded by the deadline
	}
	if _, err := p.PartitionStats(ctx, "n1", "stats", "ffffffffffffffff", []int32{0}); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("another incarnation: %v, want ErrTopicNotFound", err)
	}
}

// ensure that a node answers op 17 (FanoutCursors) for the parent
// partitions it owns over node RPC: every cursor of an attached child
// reports once anchored, at the child's attach epoch only (api.md §2.11,
// internals.md §10.3).
func TestNodeServesFanoutCursors(t *testing.T) {
	cfg := devConfig(t)
	secret := "cluster-secret-bootstrap-0123456789"
	cfg.Secrets.ClusterSecret = secret
	base := runNode(t, cfg)
	ctx := context.Background()
	for _, b := range []string{`{"name":"orders","partitions":3}`, `{"name":"audit"}`} {
		if code, body := send(t, "POST", base+"/v1/topics", b, jsonCT); code != 201 {
			t.Fatalf("create %s: %d %s", b, code, body)
		}
	}
	if code, body := send(t, "POST", base+"/v1/topics/orders/children", `{"child":"audit"}`, jsonCT); code != 200 {
		t.Fatalf("attach: %d %s", code, body)
	}
	_, child, err := getJSON(base + "/v1/topics/audit")
	epoch, _ := child["attach_epoch"].(string)
	if err != nil || epoch == "" {
		t.Fatalf("child %v %v", child, err)
	}

	c, err := quicpeer.NewClient(quicpeer.ClientOptions{Secret: []byte(secret), Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := quicpeer.NewPeers(c, addrs{"n1": cfg.HTTP.Addr})
	asked := []ports.ChildEpoch{{Child: "audit", Epoch: epoch}, {Child: "audit", Epoch: "0000000000000000"}}
	deadline := time.Now().Add(10 * time.Second)
	for {
		lags, err := p.FanoutLag(ctx, "n1", "orders", "", []int32{0, 1, 2}, asked)
		if err == nil && len(lags) == 6 && lags[0].Reported && lags[2].Reported && lags[4].Reported {
			if lags[1].Reported || lags[3].Reported || lags[5].Reported {
				t.Fatalf("another epoch reported: %+v", lags)
			}
			break // every cursor anchored
		}
		if time.Now().After(deadline) {
			t.Fatalf("cursors never reported: %+v %v", lags, err)
		}
		time.Sleep(20 * time.Millisecond) // polling the node, bounded by the deadline
	}
	if _, err := p.FanoutLag(ctx, "n1", "orders", "ffffffffffffffff", []int32{0}, asked); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("another incarnation: %v, want ErrTopicNotFound", err)
	}
}
