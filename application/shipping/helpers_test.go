package shipping_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/fanout"
	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/application/shipping"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
)

var startTime = time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)

const (
	targetURL = "https://dr.example.com"
	password  = "correct-horse-battery-staple-42"
	parentID  = "00000000000000a1"
	stubID    = "00000000000000b1"
	epoch     = "00000000000000e1"
	targetID  = "00000000000000aa"
)

var admin = access.FromUser(meta.User{Username: "root", Root: true})

type fixture struct {
	meta     *fake.MetaStore
	clock    *fake.Clock
	svc      *remotes.Service
	target   *target
	metrics  *counts
	shipper  *shipping.Shipper
	cursor   fanout.RemoteCursor
	remoteID string
}

// newFixture registers remote "dr" over a scripted target and attaches
// stub "orders-dr" of parent "orders" (partitions partitions) with lanes.
func newFixture(t *testing.T, lanes int32, heldBytes int64) *fixture {
	t.Helper()
	f := &fixture{meta: fake.NewMetaStore(), clock: fake.NewClock(startTime), metrics: &counts{n: map[string]int{}}}
	t.Cleanup(f.meta.Close)
	tr := fake.NewRemoteTransport()
	f.target = newTarget("Basic " + base64.StdEncoding.EncodeToString([]byte("replicator:"+password)))
	tr.Serve(targetURL, f.target)
	keys := fake.NewRemoteKeyring("secret-a")
	cache := remotes.NewCache(remotes.CacheDeps{Store: f.meta, Keyring: keys, Transport: tr, Secured: true})
	t.Cleanup(cache.Close)
	svc, err := remotes.New(remotes.Options{Self: "n1", APIHopEncrypted: true},
		remotes.Deps{Store: f.meta, Keyring: keys, Transport: tr, Clock: f.clock, Audit: &fake.Audit{}, Random: rand.Reader}, cache)
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	v, err := svc.Create(context.Background(), admin, remotes.CreateRequest{Name: "dr", URL: targetURL, Username: "replicator", Password: []byte(password)})
	if err != nil {
		t.Fatal(err)
	}
	f.remoteID = v.Remote.ID
	f.propose(t, &meta.CreateTopic{Name: "orders", ID: parentID, Partitions: 1, VisibilityTimeoutMs: 30_000})
	f.propose(t, &meta.AttachRemoteChild{Parent: "orders", ParentID: parentID, Child: "orders-dr", ChildID: stubID, Epoch: epoch,
		Offsets: []int64{0}, Remote: "dr", RemoteID: f.remoteID, RemoteTopic: "orders", TargetID: targetID, From: meta.RemoteFromAttach, Lanes: lanes})
	f.shipper = shipping.New(shipping.Deps{Store: f.meta, Clients: cache, Clock: f.clock, Log: slog.New(slog.DiscardHandler),
		Metrics: f.metrics, MaxHeldBytes: heldBytes, Sleep: f.sleep})
	f.cursor = fanout.RemoteCursor{Parent: "orders", ParentID: parentID, Partition: 0, Child: "orders-dr", Epoch: epoch}
	return f
}

// sleep advances the fake clock instead of waiting.
func (f *fixture) sleep(ctx context.Context, d time.Duration) bool {
	f.clock.Advance(max(d, time.Millisecond))
	return ctx.Err() == nil
}

func (f *fixture) propose(t *testing.T, ev meta.Event) {
	t.Helper()
	res, err := f.meta.Propose(context.Background(), meta.Envelope{Actor: "root", AtMs: f.clock.Now().UnixMilli(), Event: ev})
	if err != nil || !res.Result.OK() {
		t.Fatalf("propose %T: %v %+v", ev, err, res.Result)
	}
}

func (f *fixture) state(t *testing.T) shipping.CursorStatus {
	t.Helper()
	for _, s := range f.shipper.Statuses() {
		if s.Cursor == f.cursor {
			return s
		}
	}
	return shipping.CursorStatus{BlockedAt: -1}
}

type counts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counts) add(k string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[k] += n
}

func (c *counts) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

func (c *counts) Request(remote, code string)                    { c.add("request "+code, 1) }
func (c *counts) Failed(remote, class string)                    { c.add("failed "+class, 1) }
func (c *counts) Resent(remote string, n int)                    { c.add("resent", n) }
func (c *counts) Skipped(parent, child string, n int)            { c.add("skipped", n) }
func (c *counts) CheckFailed(parent, child string)               { c.add("check failed", 1) }
func (c *counts) Reread()                                        { c.add("reread", 1) }
func (c *counts) RequestSeconds(remote string, seconds float64)  { c.add("requests timed", 1) }
func (c *counts) SlotWaitSeconds(remote string, seconds float64) { c.add("slot waits", 1) }
func (c *counts) Bytes(remote string, body, wire int) {
	c.add("body bytes", body)
	c.add("wire bytes", wire)
}

// stored is one message the target accepted.
type stored struct {
	key     string
	payload string
}

// target is a scripted target cluster: it stores what a batch produce
// carries unless script answers first.
type target struct {
	mu       sync.Mutex
	auth     string
	id       string
	children []map[string]any
	stored   []stored
	batches  []int // messages per accepted batch
	// refuseZstd answers 415 to a compressed batch.
	refuseZstd bool
	zstdSeen   int
	// script, when set, may answer a batch instead of storing it (status
	// 0 = store it).
	script func(msgs []message) (status int, body string)
}

type message struct {
	Key             string          `json:"key"`
	KeyEncoding     string          `json:"key_encoding"`
	Payload         json.RawMessage `json:"payload"`
	PayloadEncoding string          `json:"payload_encoding"`
}

func (m message) decoded() stored {
	key := m.Key
	if m.KeyEncoding == "base64" {
		b, _ := base64.StdEncoding.DecodeString(m.Key)
		key = string(b)
	}
	payload := string(m.Payload)
	if m.PayloadEncoding == "base64" {
		var s string
		_ = json.Unmarshal(m.Payload, &s)
		b, _ := base64.StdEncoding.DecodeString(s)
		payload = string(b)
	}
	return stored{key: key, payload: payload}
}

func newTarget(auth string) *target { return &target{auth: auth, id: targetID} }

func (tg *target) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	answer := func(status int, body string) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
	if r.Header.Get("Authorization") != tg.auth {
		answer(http.StatusUnauthorized, `{"error":"authentication required"}`)
		return
	}
	switch {
	case r.URL.Path == "/v1/topics/orders" && r.Method == http.MethodGet:
		b, _ := json.Marshal(map[string]any{"name": "orders", "id": tg.id, "partitions": 3})
		answer(http.StatusOK, string(b))
	case r.URL.Path == "/v1/topics/orders/children":
		b, _ := json.Marshal(map[string]any{"parent": "orders", "children": tg.children})
		answer(http.StatusOK, string(b))
	case r.URL.Path == "/v1/topics/orders/produce/batch":
		tg.batch(r, answer)
	default:
		answer(http.StatusNotFound, `{"error":"topic not found"}`)
	}
}

func (tg *target) batch(r *http.Request, answer func(int, string)) {
	if r.Header.Get("Content-Encoding") == "zstd" {
		tg.zstdSeen++
		if tg.refuseZstd {
			answer(http.StatusUnsupportedMediaType, `{"error":"unsupported Content-Encoding: want zstd, gzip or none"}`)
			return
		}
	}
	var b struct{ Messages []message }
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		answer(http.StatusBadRequest, `{"error":"invalid json: `+strings.ReplaceAll(err.Error(), `"`, `'`)+`"}`)
		return
	}
	for i, m := range b.Messages {
		if len(m.Payload) == 0 || string(m.Payload) == `""` && m.PayloadEncoding == "base64" {
			answer(http.StatusBadRequest, `{"error":"message `+itoa(i)+`: message required"}`)
			return
		}
	}
	if tg.script != nil {
		if status, body := tg.script(b.Messages); status != 0 {
			answer(status, body)
			return
		}
	}
	for _, m := range b.Messages {
		tg.stored = append(tg.stored, m.decoded())
	}
	tg.batches = append(tg.batches, len(b.Messages))
	answer(http.StatusAccepted, `{"accepted":`+itoa(len(b.Messages))+"}\n")
}

func (tg *target) all() []stored {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return append([]stored(nil), tg.stored...)
}

func itoa(n int) string { return strconv.Itoa(n) }

// waitFor polls cond with a deadline (no sleep as synchronization).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func updatePassword(pw string) remotes.UpdateRequest {
	return remotes.UpdateRequest{Password: []byte(pw)}
}
