package remotes_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
)

var startTime = time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)

const (
	testPassword = "correct-horse-battery-staple-42"
	targetURL    = "https://dr.example.com"
)

var admin = access.FromUser(meta.User{Username: "root", Root: true})

type fixture struct {
	meta      *fake.MetaStore
	keyring   *fake.RemoteKeyring
	transport *fake.RemoteTransport
	clock     *fake.Clock
	audit     *fake.Audit
	cache     *remotes.Cache
	svc       *remotes.Service
	decrypts  *counter
	logs      *fake.PartitionLogs
	stuck     *stuckFake
}

// frontiersFake answers 3 for every partition (consumers acked 0..2).
type frontiersFake struct{}

func (frontiersFake) Unconsumed(_ context.Context, _, _ string, _ domain.TopicID, parts []int32) ([]int64, error) {
	out := make([]int64, len(parts))
	for i := range out {
		out[i] = 3
	}
	return out, nil
}

// stuckFake answers where a cursor is stuck.
type stuckFake struct {
	mu sync.Mutex
	at remotes.Blocked
}

func (s *stuckFake) set(b remotes.Blocked) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at = b
}

func (s *stuckFake) BlockedAt(context.Context, string, string, int32, string) (remotes.Blocked, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.at, nil
}

type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[name]++
}

func (c *counter) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

func newFixture(t *testing.T, hop bool) *fixture {
	t.Helper()
	f := &fixture{meta: fake.NewMetaStore(), keyring: fake.NewRemoteKeyring("secret-a"),
		transport: fake.NewRemoteTransport(), clock: fake.NewClock(startTime), audit: &fake.Audit{},
		decrypts: &counter{n: map[string]int{}}, logs: fake.NewPartitionLogs(), stuck: &stuckFake{at: remotes.Blocked{Offset: -1}}}
	t.Cleanup(f.meta.Close)
	f.cache = remotes.NewCache(remotes.CacheDeps{Store: f.meta, Keyring: f.keyring, Transport: f.transport,
		Secured: true, Decrypted: f.decrypts.add})
	t.Cleanup(f.cache.Close)
	svc, err := remotes.New(remotes.Options{Self: "n1", APIHopEncrypted: hop},
		remotes.Deps{Store: f.meta, Keyring: f.keyring, Transport: f.transport, Clock: f.clock, Audit: f.audit, Random: rand.Reader,
			Bounds: f.logs, Stuck: f.stuck, Frontiers: frontiersFake{}}, f.cache)
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	return f
}

func (f *fixture) create(t *testing.T, name string) remotes.View {
	t.Helper()
	v, err := f.svc.Create(context.Background(), admin, remotes.CreateRequest{Name: name, URL: targetURL, Username: "replicator", Password: []byte(testPassword)})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return v
}

// propose writes ev as the root admin.
func (f *fixture) propose(t *testing.T, ev meta.Event) {
	t.Helper()
	res, err := f.meta.Propose(context.Background(), meta.Envelope{Actor: "root", AtMs: startTime.UnixMilli(), Event: ev})
	if err != nil || !res.Result.OK() {
		t.Fatalf("propose %T: %v %+v", ev, err, res.Result)
	}
}

// narad is an in-memory stand-in for a target cluster's API, enough for
// the target checks: Basic auth, one topic, its children, the batch
// produce route's refusals, and the users route.
type narad struct {
	mu          sync.Mutex
	auth        string // the Authorization header it accepts
	secured     bool
	admin       bool
	topic       map[string]any
	children    []map[string]any
	batchRoute  bool
	legacyBatch bool // answers "too many messages" above 100
}

func newNarad(auth string) *narad {
	return &narad{auth: auth, secured: true, batchRoute: true,
		topic: map[string]any{"name": "orders", "id": "00000000000000aa", "partitions": 3, "role": "standalone"}}
}

func (n *narad) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	defer n.mu.Unlock()
	fail := func(status int, msg string) {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
	}
	if n.secured && r.Header.Get("Authorization") != n.auth {
		fail(http.StatusUnauthorized, "authentication required")
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/v1/")
	switch {
	case path == "users":
		if !n.admin {
			fail(http.StatusForbidden, "admin privileges required")
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"users": []any{}})
	case path == "topics/orders":
		_ = json.NewEncoder(w).Encode(n.topic)
	case path == "topics/orders/children":
		_ = json.NewEncoder(w).Encode(map[string]any{"parent": "orders", "children": n.children})
	case path == "topics/orders/produce/batch" && n.batchRoute:
		var b struct{ Messages []json.RawMessage }
		_ = json.NewDecoder(r.Body).Decode(&b)
		switch {
		case len(b.Messages) == 0:
			fail(http.StatusBadRequest, "messages required")
		case len(b.Messages) > 100 && n.legacyBatch:
			fail(http.StatusBadRequest, "too many messages: 101 (max 100)")
		default:
			fail(http.StatusBadRequest, "message 0: message required")
		}
	case strings.HasSuffix(path, "/produce/batch"):
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("404 page not found"))
	case strings.HasPrefix(path, "topics/"):
		fail(http.StatusNotFound, "topic not found")
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("404 page not found"))
	}
}
