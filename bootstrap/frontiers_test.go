package bootstrap

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"testing"

	"go.uber.org/zap"

	"github.com/narad/narad/adapters/quicpeer"
	"github.com/narad/narad/domain"
)

// ensure that a node answers op 38 (ConsumerFrontiers) for the partitions
// it owns over node RPC: the first offset its consumers have not acked,
// 0 for a partition nothing was acked on, and refuses an incarnation it
// does not hold (api.md §2.10.2 `from: unconsumed`).
func TestNodeServesConsumerFrontiers(t *testing.T) {
	cfg := devConfig(t)
	secret := "cluster-secret-bootstrap-0123456789"
	cfg.Secrets.ClusterSecret = secret
	base := runNode(t, cfg)
	ctx := context.Background()
	if code, body := send(t, "POST", base+"/v1/topics", `{"name":"backlog","partitions":3}`, jsonCT); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	for range 3 {
		if code, body := send(t, "POST", base+"/v1/topics/backlog/produce?partition=1", `{"n":1}`, jsonCT); code != 202 {
			t.Fatalf("produce: %d %s", code, body)
		}
	}
	for range 2 { // the dispatcher commits asynchronously: each consume waits for its record
		code, body := send(t, "GET", base+"/v1/topics/backlog/consume?partition=1&wait=5s", "", nil)
		var env struct {
			Handle string `json:"receipt_handle"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &env) != nil || env.Handle == "" {
			t.Fatalf("consume: %d %s", code, body)
		}
		if code, body := send(t, "POST", base+"/v1/topics/backlog/ack?receipt_handle="+url.QueryEscape(env.Handle), "", jsonCT); code != 204 {
			t.Fatalf("ack: %d %s", code, body)
		}
	}

	c, err := quicpeer.NewClient(quicpeer.ClientOptions{Secret: []byte(secret), Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := quicpeer.NewPeers(c, addrs{"n1": cfg.HTTP.Addr})
	if got, err := p.Unconsumed(ctx, "n1", "backlog", "", []int32{1, 0}); err != nil || !reflect.DeepEqual(got, []int64{2, 0}) {
		t.Fatalf("Unconsumed = %v, %v; want [2 0]", got, err)
	}
	if _, err := p.Unconsumed(ctx, "n1", "backlog", "ffffffffffffffff", []int32{0}); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("another incarnation: %v, want ErrTopicNotFound", err)
	}
}
