package bootstrap

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"slices"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// startedNodeWithStore runs a dev node and hands back its metadata store,
// for writes no HTTP route makes yet.
func startedNodeWithStore(t *testing.T) (string, ports.MetadataStore, string) {
	t.Helper()
	cfg := devConfig(t)
	var store ports.MetadataStore
	app := fx.New(nodeOptions(Params{Config: cfg, Log: zap.NewNop(), Start: time.Now()}), fx.Populate(&store), fx.StopTimeout(fxStopTimeout))
	if err := app.Err(); err != nil {
		t.Fatal(err)
	}
	return serveApp(t, app, cfg), store, cfg.Cluster.NodeID
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling the running node, bounded by the deadline
	}
}

var octet = map[string]string{"Content-Type": "application/octet-stream"}

type replayed struct {
	Topic   string          `json:"topic"`
	Offset  int64           `json:"offset"`
	Key     string          `json:"key"`
	Payload json.RawMessage `json:"payload"`
}

func replay(t *testing.T, base, topic string, partition int32, offset int64) (int, replayed) {
	t.Helper()
	code, body := send(t, "GET", fmt.Sprintf("%s/v1/topics/%s/consume?partition=%d&offset=%d", base, topic, partition, offset), "", nil)
	var m replayed
	if code == 200 {
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatalf("replay body %q: %v", body, err)
		}
	}
	return code, m
}

// replayAll reads every record of topic's partitions, as "key=payload".
func replayAll(t *testing.T, base, topic string, partitions int32) []string {
	t.Helper()
	var out []string
	for p := range partitions {
		for off := int64(0); ; off++ {
			code, m := replay(t, base, topic, p, off)
			if code != 200 {
				break
			}
			if m.Topic != topic {
				t.Fatalf("replay of %s answered for %q", topic, m.Topic)
			}
			out = append(out, m.Key+"="+string(m.Payload))
		}
	}
	slices.Sort(out)
	return out
}

// ensure that on one node a child created under a parent (one CreateTopicWith
// entry, as create-as-child proposes it) receives, with their keys, the
// records produced to the parent after its attach point and none before
// (conformance 79), and that the fan-out series appear.
func TestFanoutCopiesParentIntoChild(t *testing.T) {
	base, store, self := startedNodeWithStore(t)
	if code, body := send(t, "POST", base+"/v1/topics", `{"name":"orders","partitions":3}`, jsonCT); code != 201 {
		t.Fatalf("create parent: %d %s", code, body)
	}
	if code, body := send(t, "POST", base+"/v1/topics/orders/produce?key=k0", `{"n":0}`, octet); code != 202 {
		t.Fatalf("produce: %d %s", code, body)
	}
	before := domain.KeyPartition([]byte("k0"), 3)
	waitUntil(t, "the pre-attach record visible", func() bool { code, _ := replay(t, base, "orders", before, 0); return code == 200 })
	parent, _, err := store.Topic("orders")
	if err != nil {
		t.Fatal(err)
	}
	offsets := []int64{0, 0, 0}
	offsets[before] = 1 // the parent's high watermarks when the link is written
	const childID = "00000000000a0d17"
	propose := func(ev meta.Event) {
		t.Helper()
		applied, err := store.Propose(context.Background(), meta.Envelope{Actor: "test", AtMs: time.Now().UnixMilli(), Event: ev})
		if err != nil || !applied.Result.OK() {
			t.Fatalf("%T: %+v %v", ev, applied, err)
		}
	}
	propose(&meta.CreateTopicWith{
		CreateTopic: meta.CreateTopic{Name: "audit", ID: childID, Partitions: 3, VisibilityTimeoutMs: 30_000},
		Parent:      &meta.ParentSpec{Name: "orders", ID: parent.ID, Epoch: "00000000000000e1", Offsets: offsets},
	})
	for p := range int32(3) {
		// The leader's controller may have placed it already, as the
		// create applied (a single node places on itself either way).
		ev := &meta.AssignPartitionIfAbsent{Topic: "audit", TopicID: childID, Partition: p, Owner: self}
		applied, err := store.Propose(context.Background(), meta.Envelope{Actor: "test", AtMs: time.Now().UnixMilli(), Event: ev})
		if err != nil || !applied.Result.OK() && applied.Result.Code != meta.CodeExists {
			t.Fatalf("%T: %+v %v", ev, applied, err)
		}
	}
	var want []string
	for i := 1; i <= 3; i++ {
		if code, body := send(t, "POST", fmt.Sprintf("%s/v1/topics/orders/produce?key=k%d", base, i), fmt.Sprintf(`{"n":%d}`, i), octet); code != 202 {
			t.Fatalf("produce %d: %d %s", i, code, body)
		}
		want = append(want, fmt.Sprintf(`k%d={"n":%d}`, i, i))
	}
	waitUntil(t, "the post-attach records in the child", func() bool { return slices.Equal(replayAll(t, base, "audit", 3), want) })
	waitUntil(t, "the fan-out series", func() bool {
		return metric(t, base, `narad_fanout_committed_total{child="audit",parent="orders"}`) == 3 &&
			metric(t, base, fmt.Sprintf(`narad_fanout_lag_messages{child="audit",parent="orders",partition="%d"}`, before)) == 0
	})
}

// ensure that over HTTP alone a create-as-child copies from its attach
// point (conformance 79), and that after detach and re-attach the child
// receives only what was produced after the re-attach (conformance 80).
func TestFanoutOverHTTPAttachDetach(t *testing.T) {
	base, _, _ := startedNodeWithStore(t)
	produce := func(key, payload string) {
		t.Helper()
		if code, body := send(t, "POST", base+"/v1/topics/orders/produce?key="+key, payload, octet); code != 202 {
			t.Fatalf("produce %s: %d %s", key, code, body)
		}
	}
	visible := func(topic, key string) func() bool {
		p := domain.KeyPartition([]byte(key), 3)
		return func() bool {
			for off := int64(0); ; off++ {
				code, m := replay(t, base, topic, p, off)
				if code != 200 {
					return false
				}
				if m.Key == key {
					return true
				}
			}
		}
	}
	if code, body := send(t, "POST", base+"/v1/topics", `{"name":"orders","partitions":3}`, jsonCT); code != 201 {
		t.Fatalf("create parent: %d %s", code, body)
	}
	produce("before", `"b"`)
	waitUntil(t, "the pre-attach record visible", visible("orders", "before"))
	if code, body := send(t, "POST", base+"/v1/topics", `{"name":"audit","parent":"orders"}`, jsonCT); code != 201 {
		t.Fatalf("create child: %d %s", code, body)
	}
	produce("first", `"1"`)
	waitUntil(t, "the first record in the child", visible("audit", "first"))
	if code, body := send(t, "DELETE", base+"/v1/topics/orders/children/audit", "", nil); code != 204 {
		t.Fatalf("detach: %d %s", code, body)
	}
	produce("detached", `"d"`)
	waitUntil(t, "the detached-interval record in the parent", visible("orders", "detached"))
	if code, body := send(t, "POST", base+"/v1/topics/orders/children", `{"child":"audit"}`, jsonCT); code != 200 {
		t.Fatalf("re-attach: %d %s", code, body)
	}
	produce("second", `"2"`)
	waitUntil(t, "the post-re-attach record in the child", visible("audit", "second"))
	if got := replayAll(t, base, "audit", 3); !slices.Equal(got, []string{`first="1"`, `second="2"`}) {
		t.Fatalf("child holds %v", got)
	}
}
