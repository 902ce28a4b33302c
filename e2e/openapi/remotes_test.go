package openapi

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// clusterSecret is the node's NARAD_CLUSTER_SECRET: 32 bytes of hex with
// digits and letters (api.md §2.18).
const clusterSecret = "6f70656e6170692d6532652d636c7573746572a5b4c3d2e1f00f1e2d3c4b5a69"

// remotesEnv is the node's remote settings: an encrypted API hop attested,
// loopback allowed, and only the given ports.
func remotesEnv(ports ...int) []string {
	list := make([]string, len(ports))
	for i, p := range ports {
		list[i] = strconv.Itoa(p)
	}
	return []string{
		"NARAD_CLUSTER_SECRET=" + clusterSecret,
		"NARAD_REMOTES_API_HOP_ENCRYPTED=true",
		"NARAD_REMOTES_ALLOW_ADDRESSES=127.0.0.0/8",
		"NARAD_REMOTES_ALLOWED_PORTS=" + strings.Join(list, ","),
	}
}

// unusedPort is a loopback TCP port nothing listens on (checked once).
func unusedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// remotesSetup is what the remote subtests share: the fake target and a
// URL on an allowed port where nothing listens.
type remotesSetup struct {
	target   *target
	ghostURL string
}

// remoteView is what the tests read of a remote object.
type remoteView struct {
	Name     string   `json:"name"`
	ID       string   `json:"id"`
	Revision int64    `json:"revision"`
	Links    []string `json:"links"`
	Nodes    []struct {
		State string `json:"state"`
	} `json:"nodes"`
	Limits struct {
		MaxInFlight int `json:"max_in_flight"`
	} `json:"limits"`
}

// remoteBody is a create body for name at url with the target's credential.
func remoteBody(name, url string) obj {
	return obj{"name": name, "url": url, "username": targetUser, "password": targetPassword}
}

// wantNoStore fails unless the answer is marked Cache-Control: no-store.
func (a answer) wantNoStore(t *testing.T) {
	t.Helper()
	if got := a.header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", got)
	}
}

// doPaced sends c and wants status. A first answer of 429 (a per-node or
// per-remote pace of api.md §2.18) is validated, its Retry-After waited
// out as the server asks, and c sent once more.
func (cl *client) doPaced(t *testing.T, c call, want int) answer {
	t.Helper()
	a := cl.doAny(t, c, want, 429)
	if a.status == want {
		return a
	}
	secs, err := strconv.Atoi(a.header.Get("Retry-After"))
	if err != nil || secs < 1 || secs > 10 {
		t.Fatalf("%s %s: 429 with Retry-After %q", c.method, c.path, a.header.Get("Retry-After"))
	}
	select {
	case <-time.After(time.Duration(secs) * time.Second):
	case <-t.Context().Done():
		t.Fatal(t.Context().Err())
	}
	return cl.do(t, c, want)
}

// remotes registers four remotes (api.md §2.18): ghost and dead on a port
// where nothing listens, probe and target on the fake target. With the
// remote children's delete of target it spends 9 of the node's 10 remote
// writes a minute.
func (cl *client) remotes(rs remotesSetup) func(*testing.T) {
	return func(t *testing.T) {
		var ghost remoteView
		a := cl.do(t, js("POST", "/v1/remotes", root, remoteBody("ghost", rs.ghostURL)), 201)
		a.decode(t, &ghost)
		a.wantNoStore(t)
		if ghost.Name != "ghost" || len(ghost.ID) != 16 || ghost.Limits.MaxInFlight != 16 || ghost.Links != nil || ghost.Nodes != nil {
			t.Errorf("create answer: %s", a.body)
		}
		if strings.Contains(string(a.body), targetPassword) {
			t.Error("the create answer repeats the password")
		}
		cl.do(t, js("POST", "/v1/remotes", root, remoteBody("dead", rs.ghostURL)), 201)
		for _, name := range []string{"probe", "target"} {
			body := remoteBody(name, rs.target.url())
			body["ca_pem"] = rs.target.caPEM
			body["limits"] = obj{"request_timeout_ms": 10000, "compression": "none"}
			cl.do(t, js("POST", "/v1/remotes", root, body), 201)
		}
		cl.do(t, js("POST", "/v1/remotes", root, remoteBody("ghost", rs.ghostURL)), 409).wantNoStore(t)
		cl.remoteRefusals(t, rs)

		var list struct {
			Allowlist string       `json:"allowlist"`
			Key       *obj         `json:"key"`
			Remotes   []remoteView `json:"remotes"`
		}
		a = cl.do(t, get("/v1/remotes", root), 200)
		a.decode(t, &list)
		a.wantNoStore(t)
		if list.Allowlist != "none" || list.Key == nil || len(list.Remotes) != 4 || len(list.Remotes[0].Nodes) != 1 {
			t.Errorf("listing: %s", a.body)
		}
		cl.do(t, get("/v1/remotes?nodes=false", root), 200)
		cl.do(t, bad(get("/v1/remotes?nodes=maybe", root)), 400).wantError(t, "invalid nodes")

		cl.do(t, get("/v1/remotes/ghost", root), 200).wantNoStore(t)
		cl.do(t, get("/v1/remotes/ghost?nodes=false", root), 200)
		cl.do(t, get("/v1/remotes/nosuch", root), 404).wantError(t, "remote not found")
		cl.do(t, bad(get("/v1/remotes/Not_A_Name", root)), 400)

		var patched remoteView
		cl.do(t, js("PATCH", "/v1/remotes/ghost", root, obj{"limits": obj{"max_in_flight": 32, "check_interval_ms": 120000}}), 200).decode(t, &patched)
		if patched.Limits.MaxInFlight != 32 || patched.Revision <= ghost.Revision {
			t.Errorf("patch answer: %+v, created at revision %d", patched, ghost.Revision)
		}
		cl.do(t, bad(js("PATCH", "/v1/remotes/ghost", root, obj{})), 400).wantError(t, "nothing to change")
		cl.do(t, bad(js("PATCH", "/v1/remotes/ghost", root, obj{"username": "other"})), 400).wantError(t, "needs the password again")
		cl.do(t, bad(js("PATCH", "/v1/remotes/ghost", root, obj{"limits": obj{"max_in_flight": 0}})), 400).wantError(t, "limits.max_in_flight")
		cl.do(t, js("PATCH", "/v1/remotes/nosuch", root, obj{"limits": obj{"max_in_flight": 8}}), 404)

		var verdict struct {
			Remote string `json:"remote"`
			Result string `json:"result"`
			Class  string `json:"class"`
			Checks []obj  `json:"checks"`
		}
		test := js("POST", "/v1/remotes/ghost/test", root, obj{"topic": "orders"})
		cl.do(t, test, 200).decode(t, &verdict)
		if verdict.Remote != "ghost" || verdict.Result != "fail" || verdict.Class == "" || len(verdict.Checks) != 1 {
			t.Errorf("test of a port nothing listens on: %+v", verdict)
		}
		a = cl.do(t, test, 429)
		a.wantError(t, "less than 5s ago")
		a.wantNoStore(t)
		if a.header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
		cl.do(t, js("POST", "/v1/remotes/nosuch/test", root, obj{"topic": "orders"}), 404)
		cl.do(t, bad(js("POST", "/v1/remotes/ghost/test", root, obj{"topic": "a b"})), 400).wantError(t, "topic must be a topic name")

		var re struct {
			KeyVersion     string   `json:"key_version"`
			AlreadyCurrent []string `json:"already_current"`
		}
		cl.do(t, js("POST", "/v1/cluster/reencrypt-remotes", root, obj{}), 200).decode(t, &re)
		if len(re.KeyVersion) != 16 || len(re.AlreadyCurrent) != 4 {
			t.Errorf("re-encrypt: %+v", re)
		}
		cl.do(t, bad(js("POST", "/v1/cluster/reencrypt-remotes", root, obj{"all": true})), 400).wantError(t, "empty or {}")

		cl.do(t, bad(del("/v1/remotes/ghost?force=maybe", root)), 400)
		cl.do(t, del("/v1/remotes/ghost", root), 204).wantNoStore(t)
		cl.do(t, del("/v1/remotes/ghost?force=true", root), 404)
	}
}

// remoteRefusals are the remotes routes' refusals that write nothing.
func (cl *client) remoteRefusals(t *testing.T, rs remotesSetup) {
	cl.do(t, js("POST", "/v1/remotes", reader, remoteBody("other", rs.ghostURL)), 403).wantError(t, "admin privileges required")
	cl.do(t, get("/v1/remotes", reader), 403).wantNoStore(t)
	cl.do(t, get("/v1/remotes/ghost", reader), 403)
	cl.do(t, js("PATCH", "/v1/remotes/ghost", reader, obj{"limits": obj{"max_in_flight": 8}}), 403)
	cl.do(t, del("/v1/remotes/ghost", reader), 403)
	cl.do(t, js("POST", "/v1/remotes/ghost/test", reader, obj{"topic": "orders"}), 403)
	cl.do(t, js("POST", "/v1/cluster/reencrypt-remotes", reader, obj{}), 403)
	cl.do(t, bad(get("/v1/remotes", nil)), 401)

	refused := remoteBody("refused", "https://127.0.0.1:1")
	cl.do(t, js("POST", "/v1/remotes", root, refused), 400).wantError(t, "url")
	missing := remoteBody("partial", rs.ghostURL)
	delete(missing, "password")
	cl.do(t, bad(js("POST", "/v1/remotes", root, missing)), 400).wantError(t, "password required")
	cl.do(t, bad(js("POST", "/v1/remotes", root, remoteBody("Upper", rs.ghostURL))), 400).wantError(t, "name must start")
	short := remoteBody("short", rs.ghostURL)
	short["password"] = "too-short"
	cl.do(t, js("POST", "/v1/remotes", root, short), 400).wantError(t, "password must be")
	huge := remoteBody("huge", rs.ghostURL)
	huge["ca_pem"] = strings.Repeat("x", 128<<10)
	cl.do(t, bad(js("POST", "/v1/remotes", root, huge)), 413).wantError(t, "request body too large")
	cl.do(t, js("POST", "/v1/remotes/ghost/test", root, obj{"topic": "orders", "source": "nosuch"}), 404)
}
