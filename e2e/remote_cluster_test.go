package e2e

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/httpclient"
)

// TestRemoteHarness boots the pair every remote test uses: two secured
// 3-node clusters with different cluster secrets, B behind TLS proxies
// with a certificate from a CA made here, and remote "b" registered on A
// (api.md §2.18). It checks the remote object hides the password and is
// marked no-store, and that a test of the remote against B's "orders"
// passes every target check (internals.md §7.5).
func TestRemoteHarness(t *testing.T) {
	p := startRemotePair(t)
	got := asAdmin(t, p.a[1], "GET", "/v1/remotes/"+remoteName, "")
	got.want(t, "read remote b on another A node", 200, "")
	if strings.Contains(got.body, p.replicatorPW) {
		t.Fatalf("the remote object repeats the password: %s", got.body)
	}
	if cc := got.header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("remote object Cache-Control %q, want no-store", cc)
	}
	var r struct {
		URL      string `json:"url"`
		Username string `json:"username"`
		Password struct {
			Fingerprint string `json:"fingerprint"`
		} `json:"password"`
		CAPEMSHA512 string `json:"ca_pem_sha512"`
	}
	if err := json.Unmarshal([]byte(got.body), &r); err != nil || r.URL != p.proxies[0].url() || r.Username != replicatorID ||
		r.Password.Fingerprint == "" || r.CAPEMSHA512 == "" {
		t.Fatalf("remote object %s (%v), want url %s, username %s, a fingerprint and the CA's hash", got.body, err, p.proxies[0].url(), replicatorID)
	}

	check := asAdmin(t, p.a[0], "POST", "/v1/remotes/"+remoteName+"/test", `{"topic":"`+remoteTopic+`"}`)
	check.want(t, "test remote b", 200, "")
	var v struct {
		Remote string            `json:"remote"`
		Result string            `json:"result"`
		Class  string            `json:"class"`
		Checks []json.RawMessage `json:"checks"`
	}
	if err := json.Unmarshal([]byte(check.body), &v); err != nil || v.Result != "pass" || v.Remote != remoteName || len(v.Checks) == 0 {
		t.Fatalf("test of remote b: %s (%v), want result pass with member reports", check.body, err)
	}
	if strings.Contains(check.body, p.replicatorPW) {
		t.Fatalf("the test answer repeats the password: %s", check.body)
	}
	t.Logf("remote b passes its test: %d member reports, e.g. %s", len(v.Checks), v.Checks[0])

	// The replicator may produce to the target and nothing more.
	c, err := httpclient.New(httpclient.Options{Servers: []string{p.proxies[1].url()}, User: replicatorID, Password: p.replicatorPW,
		ClientName: "narad-e2e", HTTPClient: caClient(t, p.ca)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListUsers(t.Context()); httpclient.StatusOf(err) != 403 {
		t.Fatalf("the replicator lists B's users through a proxy: %v, want 403", err)
	}
}

// TestRemoteOrderCheck checks the ledger's order rule on hand-made copies:
// a duplicate may repeat older records, a first copy may not come before an
// earlier record of its key.
func TestRemoteOrderCheck(t *testing.T) {
	l := newShipLedger()
	copyAt := func(part int, off int64, key string, seq int) {
		l.deliver(1, httpclient.Message{Partition: part, Offset: off, Key: []byte(key),
			Payload: json.RawMessage(`{"k":"` + key + `","seq":` + strconv.Itoa(seq) + `}`)})
	}
	for i := 0; i < 4; i++ {
		l.accept(shipRec{"a", i})
	}
	l.accept(shipRec{"b", 0})
	copyAt(0, 0, "a", 0)
	copyAt(0, 1, "a", 1)
	copyAt(0, 2, "a", 0) // a resent request: a duplicate steps back
	copyAt(0, 3, "a", 1)
	copyAt(0, 4, "a", 3)
	copyAt(1, 0, "b", 0)
	copyAt(1, 0, "b", 0) // a consume redelivery of the same copy
	if l.complete() {
		t.Fatal("a:2 is missing, yet the ledger is complete")
	}
	if v, reg := l.orderViolations(); len(v) != 0 || reg != 1 {
		t.Fatalf("violations %v, regressions %d; want none and 1", v, reg)
	}
	copyAt(0, 5, "a", 2) // first copy of a:2 after a:3
	r := l.report()
	if !l.complete() || r.duplicates != 2 || r.redelivered != 1 || r.unaccepted != 0 || len(r.lost) != 0 {
		t.Fatalf("report %+v", r)
	}
	if v, _ := l.orderViolations(); len(v) != 1 || !strings.Contains(v[0], "seq 2") {
		t.Fatalf("violations %v, want a:2 after a:3", v)
	}
}
