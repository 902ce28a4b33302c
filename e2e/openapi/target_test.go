package openapi

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The credential the node's remotes hold for the fake target, and the
// incarnation ID every target topic reports.
const (
	targetUser     = "replicator"
	targetPassword = "openapi-replicator-password-24+"
	targetTopicID  = "00c0ffee00c0ffee"
	// targetMissingTopic is the one topic the target does not have.
	targetMissingTopic = "nosuch"
)

// target is a TLS server in the test process that answers the remote
// checks and the batch produce of a remote child like a secured Narad
// node whose credential may produce but is not an admin (api.md §5.8,
// internals.md §7.5). It stores nothing.
type target struct {
	srv   *httptest.Server
	caPEM string // the server certificate, the remote's whole CA bundle
	port  int

	mu      sync.Mutex
	holding bool // answer real batches 503 (nothing ships)
}

// startTarget starts the fake target on a loopback port; it stops when
// the test ends.
func startTarget(t *testing.T) *target {
	t.Helper()
	tg := &target{}
	tg.srv = httptest.NewTLSServer(http.HandlerFunc(tg.serve))
	t.Cleanup(tg.srv.Close)
	tg.caPEM = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tg.srv.Certificate().Raw}))
	tg.port = tg.srv.Listener.Addr().(*net.TCPAddr).Port
	return tg
}

// url is the remote URL of the target.
func (tg *target) url() string { return fmt.Sprintf("https://127.0.0.1:%d", tg.port) }

// hold makes real batches fail (503) while on, so that nothing ships.
func (tg *target) hold(on bool) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.holding = on
}

func (tg *target) serve(w http.ResponseWriter, r *http.Request) {
	if user, pass, ok := r.BasicAuth(); !ok || user != targetUser || pass != targetPassword {
		w.Header().Set("WWW-Authenticate", `Basic realm="narad"`)
		reply(w, http.StatusUnauthorized, obj{"error": "authentication required"})
		return
	}
	segs := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/"), "/")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/users":
		reply(w, http.StatusForbidden, obj{"error": "admin privileges required"})
	case len(segs) < 2 || segs[0] != "topics":
		reply(w, http.StatusNotFound, obj{"error": "not found"})
	case segs[1] == targetMissingTopic:
		reply(w, http.StatusNotFound, obj{"error": "topic not found"})
	case len(segs) == 2 && r.Method == http.MethodGet:
		reply(w, http.StatusOK, obj{"name": segs[1], "id": targetTopicID, "partitions": 3, "retention_ms": 0,
			"visibility_timeout_ms": 30000, "max_in_flight_per_partition": 1024, "max_acked_ahead_per_partition": 1024,
			"created_at": 1, "owner": "admin", "role": "standalone", "schema_version": 0, "partition_stats": []obj{}})
	case len(segs) == 3 && segs[2] == "children" && r.Method == http.MethodGet:
		reply(w, http.StatusOK, obj{"parent": segs[1], "parent_id": targetTopicID, "children": []obj{}})
	case len(segs) == 4 && segs[2] == "produce" && segs[3] == "batch" && r.Method == http.MethodPost:
		tg.batch(w, r)
	default:
		reply(w, http.StatusNotFound, obj{"error": "not found"})
	}
}

// batch answers a batch produce as Narad does (api.md §2.13.1): an empty
// batch is 400 "messages required", a message without payload names its
// index, and a real batch is accepted (202) unless the target holds.
func (tg *target) batch(w http.ResponseWriter, r *http.Request) {
	if ce := r.Header.Get("Content-Encoding"); ce != "" && ce != "identity" {
		reply(w, http.StatusUnsupportedMediaType, obj{"error": "unsupported Content-Encoding"})
		return
	}
	var b struct {
		Messages []map[string]json.RawMessage `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		reply(w, http.StatusBadRequest, obj{"error": "invalid json: " + err.Error()})
		return
	}
	if len(b.Messages) == 0 {
		reply(w, http.StatusBadRequest, obj{"error": "messages required"})
		return
	}
	for i, m := range b.Messages {
		if _, ok := m["payload"]; !ok {
			reply(w, http.StatusBadRequest, obj{"error": fmt.Sprintf("message %d: message required", i)})
			return
		}
	}
	tg.mu.Lock()
	defer tg.mu.Unlock()
	if tg.holding {
		reply(w, http.StatusServiceUnavailable, obj{"error": "no leader; retry"})
		return
	}
	reply(w, http.StatusAccepted, obj{"accepted": len(b.Messages)})
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
