package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
)

const remotePassword = "correct-horse-battery-staple-42"

// remotesEngine serves the remotes routes over the real use case with fake
// ports, as admin "root" and non-admin "bob" (security on unless insecure).
func remotesEngine(t *testing.T, insecure bool) (*gin.Engine, *fake.MetaStore) {
	t.Helper()
	m := fake.NewMetaStore()
	t.Cleanup(m.Close)
	keys, tr := fake.NewRemoteKeyring("secret-a"), fake.NewRemoteTransport()
	cache := remotes.NewCache(remotes.CacheDeps{Store: m, Keyring: keys, Transport: tr, Secured: !insecure})
	svc, err := remotes.New(remotes.Options{Self: "n1", APIHopEncrypted: true},
		remotes.Deps{Store: m, Keyring: keys, Transport: tr, Clock: fake.NewClock(time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)),
			Audit: &fake.Audit{}, Random: rand.Reader}, cache)
	if err != nil {
		t.Fatal(err)
	}
	auth := multiAuth{"root": {Username: "root", Root: true}, "bob": {Username: "bob",
		Grants: []meta.Grant{{Action: access.ActionProduce, Patterns: []string{"*"}}}}}
	sec := Security{Enabled: !insecure, Auth: auth}
	return NewEngineWith(EngineOptions{Log: zap.NewNop(), Security: sec}, RemoteRoutes(svc, zap.NewNop())...), m
}

// multiAuth accepts each account with password "pw".
type multiAuth map[string]meta.User

func (a multiAuth) Authenticate(_ context.Context, user string, pass []byte, _ string) (meta.User, error) {
	if u, ok := a[user]; ok && string(pass) == "pw" {
		return u, nil
	}
	return meta.User{}, domain.ErrUnauthenticated
}

func remoteCall(e *gin.Engine, method, path, user, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.SetBasicAuth(user, "pw")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

const createDR = `{"name":"dr","url":"https://dr.example.com","username":"replicator","password":"` + remotePassword + `"}`

// Conformance 237, 238: security off → 403 remotes require security; a
// non-admin → 403 admin privileges required.
func TestRemotesAccess(t *testing.T) {
	open, _ := remotesEngine(t, true)
	if rec := remoteCall(open, "GET", "/v1/remotes", "", ""); rec.Code != 403 || !strings.Contains(rec.Body.String(), "remotes require security") {
		t.Fatalf("security off: %d %s", rec.Code, rec.Body)
	}
	e, _ := remotesEngine(t, false)
	for _, m := range []string{"GET", "POST"} {
		if rec := remoteCall(e, m, "/v1/remotes", "bob", createDR); rec.Code != 403 || !strings.Contains(rec.Body.String(), "admin privileges required") {
			t.Fatalf("bob %s: %d %s", m, rec.Code, rec.Body)
		}
	}
}

// Conformance 239, 241, 242, 243, 245, 247, 248 over HTTP.
func TestRemotesRoutes(t *testing.T) {
	e, m := remotesEngine(t, false)
	for name, body := range map[string]string{
		"http url":      strings.Replace(createDR, "https://", "http://", 1),
		"name B":        strings.Replace(createDR, `"dr"`, `"B"`, 1),
		"23-byte pw":    strings.Replace(createDR, remotePassword, "23-bytes-password-xxxxx", 1),
		"unknown field": strings.Replace(createDR, `{`, `{"x":1,`, 1),
	} {
		rec := remoteCall(e, "POST", "/v1/remotes", "root", body)
		if rec.Code != 400 || strings.Contains(rec.Body.String(), remotePassword) || strings.Contains(rec.Body.String(), "23-bytes-password") {
			t.Errorf("%s: %d %s", name, rec.Code, rec.Body)
		}
	}
	rec := remoteCall(e, "POST", "/v1/remotes", "root", createDR)
	if rec.Code != 201 || rec.Header().Get("Cache-Control") != "no-store" || strings.Contains(rec.Body.String(), remotePassword) {
		t.Fatalf("create: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	var got map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &got)
	limits, _ := got["limits"].(map[string]any)
	pw, _ := got["password"].(map[string]any)
	if got["credential_version"] != 1.0 || got["revision"] != 1.0 || pw["fingerprint"] == "" || limits["max_in_flight"] != 16.0 ||
		limits["request_timeout_ms"] != 30000.0 || limits["compression"] != "none" || got["id"] == "" {
		t.Fatalf("create body %s", rec.Body)
	}
	if rec := remoteCall(e, "GET", "/v1/remotes", "root", ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"allowlist":"none"`) ||
		!strings.Contains(rec.Body.String(), `"key":{`) || !strings.Contains(rec.Body.String(), `"nodes":[`) {
		t.Fatalf("list: %d %s", rec.Code, rec.Body)
	}
	if rec := remoteCall(e, "GET", "/v1/remotes/dr?nodes=false", "root", ""); rec.Code != 200 || strings.Contains(rec.Body.String(), `"nodes"`) {
		t.Fatalf("get: %d %s", rec.Code, rec.Body)
	}
	if rec := remoteCall(e, "GET", "/v1/remotes/ghost", "root", ""); rec.Code != 404 {
		t.Fatalf("ghost: %d", rec.Code)
	}
	if rec := remoteCall(e, "POST", "/v1/remotes", "root", createDR); rec.Code != 409 {
		t.Fatalf("again: %d", rec.Code)
	}
	if rec := remoteCall(e, "PATCH", "/v1/remotes/dr", "root", `{"url":"https://other:443"}`); rec.Code != 400 {
		t.Fatalf("url without password: %d", rec.Code)
	}
	if rec := remoteCall(e, "PATCH", "/v1/remotes/dr", "root", `{"limits":{"max_in_flight":32}}`); rec.Code != 200 ||
		!strings.Contains(rec.Body.String(), `"max_in_flight":32`) || !strings.Contains(rec.Body.String(), `"revision":2`) {
		t.Fatalf("limits: %d %s", rec.Code, rec.Body)
	}
	if rec := remoteCall(e, "PATCH", "/v1/remotes/dr", "root", `{"limits":{"max_in_flight":0}}`); rec.Code != 400 {
		t.Fatalf("limit 0: %d", rec.Code)
	}
	big := `{"name":"x","pad":"` + strings.Repeat("a", 131072) + `"}`
	if rec := remoteCall(e, "POST", "/v1/remotes", "root", big); rec.Code != 413 {
		t.Fatalf("big body: %d", rec.Code)
	}
	if rec := remoteCall(e, "POST", "/v1/cluster/reencrypt-remotes", "root", `{"x":1}`); rec.Code != 400 {
		t.Fatalf("reencrypt x: %d", rec.Code)
	}
	rec = remoteCall(e, "POST", "/v1/cluster/reencrypt-remotes", "root", `{}`)
	for _, f := range []string{`"key_version"`, `"reencrypted"`, `"already_current":["dr"]`, `"failed":[]`} {
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), f) {
			t.Fatalf("reencrypt: %d %s, want %s", rec.Code, rec.Body, f)
		}
	}
	deleteInUse(t, e, m)
}

// Conformance 248: a delete while a remote child uses the remote is a 409
// naming the link; force deletes it.
func deleteInUse(t *testing.T, e *gin.Engine, m *fake.MetaStore) {
	t.Helper()
	all, _ := m.Remotes()
	for _, ev := range []meta.Event{
		&meta.CreateTopic{Name: "orders", ID: "00000000000000a1", Partitions: 1, VisibilityTimeoutMs: 30_000},
		&meta.AttachRemoteChild{Parent: "orders", ParentID: "00000000000000a1", Child: "orders-dr", ChildID: "00000000000000b1",
			Epoch: "00000000000000e1", Offsets: []int64{0}, Remote: "dr", RemoteID: all[0].ID, RemoteTopic: "orders", From: "attach", Lanes: 1},
	} {
		if res, err := m.Propose(context.Background(), meta.Envelope{Actor: "root", Event: ev}); err != nil || !res.Result.OK() {
			t.Fatalf("%T: %v %+v", ev, err, res)
		}
	}
	rec := remoteCall(e, "DELETE", "/v1/remotes/dr", "root", "")
	var body struct {
		Error string   `json:"error"`
		Links []string `json:"links"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	if rec.Code != 409 || body.Error != "remote is used by 1 remote children" || len(body.Links) != 1 || body.Links[0] != "orders/orders-dr" {
		t.Fatalf("delete in use: %d %s", rec.Code, rec.Body)
	}
	if rec := remoteCall(e, "DELETE", "/v1/remotes/dr?force=maybe", "root", ""); rec.Code != 400 {
		t.Fatalf("bad force: %d", rec.Code)
	}
	if rec := remoteCall(e, "DELETE", "/v1/remotes/dr?force=true", "root", ""); rec.Code != 204 {
		t.Fatalf("force: %d %s", rec.Code, rec.Body)
	}
}

// Conformance 244: the eleventh remote write within a minute is a 429
// with Retry-After.
func TestRemoteWritesRateLimited(t *testing.T) {
	e, _ := remotesEngine(t, false)
	if rec := remoteCall(e, "POST", "/v1/remotes", "root", createDR); rec.Code != 201 {
		t.Fatal(rec.Code)
	}
	for i := 2; i <= 10; i++ {
		if rec := remoteCall(e, "PATCH", "/v1/remotes/dr", "root", `{"limits":{"max_in_flight":`+strconv.Itoa(i)+`}}`); rec.Code != 200 {
			t.Fatalf("write %d: %d", i, rec.Code)
		}
	}
	rec := remoteCall(e, "PATCH", "/v1/remotes/dr", "root", `{"limits":{"max_in_flight":3}}`)
	if rec.Code != 429 || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "at most 10 remote writes a minute") {
		t.Fatalf("11th: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
}

// A gate's refusal is a 412 naming the member that held the write back
// (api.md §2.18 "body names it in members").
func TestRemoteWriteHeldBackNamesTheMember(t *testing.T) {
	e, m := remotesEngine(t, false)
	_, err := m.Propose(context.Background(), meta.Envelope{Actor: "root", Event: &meta.MemberJoin{ID: "n2", Addr: "n2:7942",
		ClusterAddr: "n2:7943", EntryTypes: meta.LegacyNewestType}})
	if err != nil {
		t.Fatal(err)
	}
	rec := remoteCall(e, "POST", "/v1/remotes", "root", createDR)
	var body struct {
		Error   string              `json:"error"`
		Gate    string              `json:"gate"`
		Members []map[string]string `json:"members"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 412 || body.Gate != "release" ||
		len(body.Members) != 1 || body.Members[0]["node"] != "n2" || body.Members[0]["reason"] == "" {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}
