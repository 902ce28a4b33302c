package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// Credentials the fake admin broker knows: the root admin and one scoped user.
const (
	rootPass  = "Root-Secret-9"
	alicePass = "Alice-Secret-7"
)

// fakeAdmin is an in-memory broker for the admin routes: the user routes of
// api.md §2.16, GET /v1/cluster/members and GET /v1/cluster/events. Every
// request needs Basic credentials of a known user; "admin" is the only admin.
type fakeAdmin struct {
	srv       *httptest.Server
	mu        sync.Mutex
	reqs      []seenRequest
	users     map[string]httpclient.User
	passwords map[string]string
	members   []httpclient.Member
	events    []httpclient.Event // newest first
	stuckNext uint64             // when set, every events page answers this next_before
}

func newFakeAdmin(t *testing.T) *fakeAdmin {
	f := &fakeAdmin{
		users: map[string]httpclient.User{
			"admin": {Username: "admin", Grants: []httpclient.Grant{{Action: "admin"}}, Root: true, CreatedAtMs: 1783615500000},
			"alice": {Username: "alice", Grants: []httpclient.Grant{{Action: "produce", Patterns: []string{"orders-*", "audit"}}, {Action: "consume", Patterns: []string{"orders-*"}}}, CreatedAtMs: 1783615560000, UpdatedAtMs: 1783615561000},
		},
		passwords: map[string]string{"admin": rootPass, "alice": alicePass},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/users", f.admin(f.createUser))
	mux.HandleFunc("GET /v1/users", f.admin(f.listUsers))
	mux.HandleFunc("GET /v1/users/{u}", f.admin(f.withUser(f.getUser)))
	mux.HandleFunc("DELETE /v1/users/{u}", f.admin(f.withUser(f.deleteUser)))
	mux.HandleFunc("PUT /v1/users/{u}/grants", f.admin(f.withUser(f.setGrants)))
	mux.HandleFunc("PUT /v1/users/{u}/password", f.withUser(f.setPassword))
	mux.HandleFunc("GET /v1/cluster/members", f.admin(f.listMembers))
	mux.HandleFunc("GET /v1/cluster/events", f.admin(f.listEvents))
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		f.mu.Lock()
		defer f.mu.Unlock()
		f.reqs = append(f.reqs, seenRequest{line: r.Method + " " + r.URL.RequestURI(), header: r.Header.Clone(), body: string(body)})
		if u, p, ok := r.BasicAuth(); !ok || f.passwords[u] == "" || f.passwords[u] != p {
			w.Header().Set("WWW-Authenticate", `Basic realm="narad"`)
			writeErr(w, 401, "unauthorized")
			return
		}
		if (r.Method == http.MethodPost || r.Method == http.MethodPut) && r.Header.Get("X-Narad-Client") == "" {
			writeErr(w, 415, "state-changing requests must send Content-Type: application/json or application/octet-stream, or an X-Narad-Client header")
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAdmin) url() string { return f.srv.URL }

// set changes the fake's state under its lock.
func (f *fakeAdmin) set(fn func(f *fakeAdmin)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeAdmin) requests() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

// caller is the authenticated username (checked already).
func caller(r *http.Request) string {
	u, _, _ := r.BasicAuth()
	return u
}

func (f *fakeAdmin) admin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if caller(r) != "admin" {
			writeErr(w, 403, "admin privileges required")
			return
		}
		h(w, r)
	}
}

func (f *fakeAdmin) withUser(h func(http.ResponseWriter, *http.Request, httpclient.User)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u, ok := f.users[r.PathValue("u")]
		if !ok {
			writeErr(w, 404, "not found")
			return
		}
		h(w, r, u)
	}
}

func (f *fakeAdmin) createUser(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Username string             `json:"username"`
		Password string             `json:"password"`
		Grants   []httpclient.Grant `json:"grants"`
	}
	if !decodeStrict(w, r, &req) {
		return
	}
	switch {
	case req.Password == "":
		writeErr(w, 400, "password required")
	case f.users[req.Username].Username != "":
		writeErr(w, 409, "already exists")
	default:
		u := httpclient.User{Username: req.Username, Grants: req.Grants, CreatedAtMs: 1783616000000, UpdatedAtMs: 1783616000000}
		f.users[u.Username], f.passwords[u.Username] = u, req.Password
		writeJSON(w, 201, u)
	}
}

func (f *fakeAdmin) listUsers(w http.ResponseWriter, _ *http.Request) {
	out := []httpclient.User{}
	for _, u := range f.users {
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b httpclient.User) int { return strings.Compare(a.Username, b.Username) })
	writeJSON(w, 200, out)
}

func (f *fakeAdmin) getUser(w http.ResponseWriter, _ *http.Request, u httpclient.User) {
	writeJSON(w, 200, u)
}

func (f *fakeAdmin) deleteUser(w http.ResponseWriter, r *http.Request, u httpclient.User) {
	switch {
	case u.Root:
		writeErr(w, 403, "the root admin cannot be deleted")
	case u.Username == caller(r):
		writeErr(w, 403, "cannot delete your own account")
	default:
		delete(f.users, u.Username)
		delete(f.passwords, u.Username)
		w.WriteHeader(204)
	}
}

func (f *fakeAdmin) setGrants(w http.ResponseWriter, r *http.Request, u httpclient.User) {
	var req struct {
		Grants []httpclient.Grant `json:"grants"`
	}
	if !decodeStrict(w, r, &req) {
		return
	}
	switch {
	case req.Grants == nil:
		writeErr(w, 400, "grants required")
	case u.Username == caller(r):
		writeErr(w, 403, "cannot modify your own grants")
	default:
		u.Grants, u.UpdatedAtMs = req.Grants, u.UpdatedAtMs+1
		f.users[u.Username] = u
		writeJSON(w, 200, u)
	}
}

func (f *fakeAdmin) setPassword(w http.ResponseWriter, r *http.Request, u httpclient.User) {
	var req struct {
		New     string `json:"new_password"`
		Current string `json:"current_password"`
	}
	if !decodeStrict(w, r, &req) {
		return
	}
	self := caller(r) == u.Username
	switch {
	case caller(r) != "admin" && !self:
		writeErr(w, 403, "admin required")
	case req.New == "":
		writeErr(w, 400, "new_password required")
	case caller(r) != "admin" && req.Current != f.passwords[u.Username]:
		writeErr(w, 403, "current password is incorrect")
	default:
		f.passwords[u.Username] = req.New
		w.WriteHeader(204)
	}
}

func (f *fakeAdmin) listMembers(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, 200, map[string]any{"members": f.members})
}

// listEvents serves newest-first pages below `before`, without heartbeats
// unless asked, and next_before set to the page's last seq when older
// entries remain.
func (f *fakeAdmin) listEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, before := 100, uint64(0)
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			writeErr(w, 400, "invalid limit: must be 1 to 1000")
			return
		}
		limit = n
	}
	if s := q.Get("before"); s != "" {
		before, _ = strconv.ParseUint(s, 10, 64)
	}
	page := httpclient.EventPage{Events: []httpclient.Event{}}
	for _, ev := range f.events {
		if (before != 0 && ev.Seq >= before) || (ev.Type == "MemberHeartbeat" && q.Get("heartbeats") != "true") {
			continue
		}
		if len(page.Events) == limit {
			page.NextBefore = page.Events[limit-1].Seq
			break
		}
		page.Events = append(page.Events, ev)
	}
	if f.stuckNext != 0 {
		page.NextBefore = f.stuckNext
	}
	writeJSON(w, 200, page)
}

// sampleEvents is a history of five entries, newest first; seq 4 is a heartbeat.
func sampleEvents() []httpclient.Event {
	at := func(s int) time.Time { return time.Date(2026, 12, 3, 8, 0, s, 123e6, time.UTC) }
	return []httpclient.Event{
		{Seq: 5, Index: 120, At: at(4), Actor: "alice", Type: "CreateTopic", Subject: "topic orders", Result: "ok"},
		{Seq: 4, Index: 119, At: at(3), Type: "MemberHeartbeat", Subject: "member n1", Result: "ok"},
		{Seq: 3, Index: 118, At: at(2), Actor: "bob", Type: "DeleteUser", Subject: "user admin", Result: "protected", Detail: "the root admin cannot be deleted"},
		{Seq: 2, Index: 117, At: at(1), Type: "AssignPartition", Subject: "topic orders partition 0", Result: "ok", Detail: "owner n2"},
		{Seq: 1, Index: 116, At: at(0), Actor: "alice", Type: "CreateUser", Subject: "user bob", Result: "exists", Detail: "already\texists\nreally"},
	}
}
