package e2e

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// The names every remote test uses: parent "orders" on A ships through the
// remote child "orders-b" over remote "b" to topic "orders" on B.
const (
	remoteName   = "b"
	remoteTopic  = "orders"
	remoteChild  = "orders-b"
	remoteParts  = 3
	replicatorID = "replicator"
)

// remoteHTTP bounds each admin request of the remote tests.
var remoteHTTP = &http.Client{Timeout: 60 * time.Second}

// remotePair is two secured 3-node clusters on loopback with different
// cluster secrets: A, the source, and B, the target, each B node behind a
// TLS proxy. B holds topic "orders" and user "replicator" (a produce grant
// on it, not admin); A holds parent "orders" and remote "b" (api.md §2.18)
// reaching B's first node through its proxy.
type remotePair struct {
	a, b         []*node
	proxies      []*tlsProxy // proxies[i] forwards to b[i]
	ca           remoteCA
	secretA      string
	replicatorPW string
	aClient      *httpclient.Client   // admin on a[0]
	bClients     []*httpclient.Client // admin on each B node
}

// newClusterSecret returns 64 random hex characters, which pass the
// strength rule of internals.md §7.6 (a digit and a letter, 32 bytes).
func newClusterSecret(t *testing.T) string {
	t.Helper()
	for {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		s := hex.EncodeToString(b)
		if strings.ContainsAny(s, "0123456789") && strings.ContainsAny(s, "abcdef") {
			return s
		}
	}
}

// securedEnv is a secured node's environment with its own cluster TLS
// (as startSecuredCluster sets it) and cluster secret.
func securedEnv(t *testing.T, secret string) []string {
	t.Helper()
	cert, key, ca := writeClusterTLS(t)
	return []string{
		"NARAD_SECURITY_ENABLED=true",
		"NARAD_CLUSTER_TLS_CERT_FILE=" + cert,
		"NARAD_CLUSTER_TLS_KEY_FILE=" + key,
		"NARAD_CLUSTER_TLS_CA_FILE=" + ca,
		"NARAD_ADMIN_PASSWORD=" + rootPassword,
		"NARAD_CLUSTER_SECRET=" + secret,
		"NARAD_LOG_LEVEL=info",
	}
}

// spawnCluster starts n nodes of one cluster as startClusterWith does,
// without waiting for them, so two clusters boot side by side.
func spawnCluster(t *testing.T, n int, env []string) []*node {
	t.Helper()
	ports := make([]int, n)
	peers := make([]string, n)
	for i := range ports {
		ports[i] = freePorts(t)
		peers[i] = fmt.Sprintf("n%d@127.0.0.1:%d", i+1, ports[i]+1)
	}
	nodes := make([]*node, n)
	for i := range nodes {
		nodes[i] = spawn(t, t.TempDir(), ports[i], append([]string{
			fmt.Sprintf("NARAD_NODE_ID=n%d", i+1),
			fmt.Sprintf("NARAD_HTTP_ADDR=127.0.0.1:%d", ports[i]),
			fmt.Sprintf("NARAD_CLUSTER_ADDR=127.0.0.1:%d", ports[i]+1),
			"NARAD_CLUSTER_PEERS=" + strings.Join(peers, ","),
		}, env...))
	}
	return nodes
}

// startRemotePair boots both clusters, the proxies, B's target topic and
// replicator, A's parent, and registers remote "b" on A (201).
func startRemotePair(t *testing.T) *remotePair {
	t.Helper()
	began := time.Now()
	p := &remotePair{ca: newRemoteCA(t), secretA: newClusterSecret(t), replicatorPW: "replicator-" + newClusterSecret(t)[:24]}
	p.b = spawnCluster(t, 3, securedEnv(t, newClusterSecret(t)))
	ports := make([]string, len(p.b))
	for i, n := range p.b {
		p.proxies = append(p.proxies, startTLSProxy(t, p.ca, n.url))
		ports[i] = strconv.Itoa(p.proxies[i].port)
	}
	p.a = spawnCluster(t, 3, append(securedEnv(t, p.secretA),
		"NARAD_REMOTES_API_HOP_ENCRYPTED=true",
		"NARAD_REMOTES_ALLOWED_PORTS="+strings.Join(ports, ","),
		"NARAD_REMOTES_ALLOW_ADDRESSES=127.0.0.0/8"))
	for _, n := range append(append([]*node{}, p.b...), p.a...) {
		n.waitReady()
		waitSignIn(t, n.url, "admin", rootPassword)
	}
	p.aClient = adminClient(t, p.a[0])
	for _, n := range p.b {
		p.bClients = append(p.bClients, adminClient(t, n))
	}
	asAdmin(t, p.b[0], "POST", "/v1/users", fmt.Sprintf(`{"username":%q,"password":%q,"grants":[{"action":"produce","patterns":[%q]}]}`,
		replicatorID, p.replicatorPW, remoteTopic)).want(t, "create the replicator on B", 201, "")
	p.createTarget(t)
	if _, err := p.aClient.CreateTopic(t.Context(), httpclient.TopicSpec{Name: remoteTopic, Partitions: remoteParts}); err != nil {
		t.Fatalf("create the parent on A: %v", err)
	}
	waitPlaced(t, p.aClient, remoteTopic)
	body, _ := json.Marshal(map[string]any{"name": remoteName, "url": p.proxies[0].url(), "username": replicatorID,
		"password": p.replicatorPW, "ca_pem": p.ca.pem, "limits": map[string]any{"check_interval_ms": 10000}})
	asAdmin(t, p.a[0], "POST", "/v1/remotes", string(body)).want(t, "register remote b on A", 201, "")
	t.Cleanup(func() {
		if t.Failed() { // what each A node's credential cache holds (api.md §2.18 nodes)
			if a, err := remoteHTTP.Do(adminRequest(p.liveA(), "/v1/remotes/"+remoteName)); err == nil {
				b, _ := io.ReadAll(a.Body)
				a.Body.Close()
				t.Logf("remote b on A: %d %s", a.StatusCode, b)
			}
		}
	})
	t.Logf("remote pair up in %s: A %s, B %s, proxies %v", time.Since(began).Round(time.Millisecond), urls(p.a), urls(p.b), ports)
	return p
}

// createTarget creates B's "orders" as the parent is: same name and
// partition count, no schema; and waits until it is placed.
func (p *remotePair) createTarget(t *testing.T) {
	t.Helper()
	if _, err := p.bClients[0].CreateTopic(t.Context(), httpclient.TopicSpec{Name: remoteTopic, Partitions: remoteParts}); err != nil {
		t.Fatalf("create the target on B: %v", err)
	}
	waitPlaced(t, p.bClients[0], remoteTopic)
}

func urls(nodes []*node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.url
	}
	return out
}

func adminClient(t *testing.T, n *node) *httpclient.Client {
	t.Helper()
	c, err := httpclient.New(httpclient.Options{Servers: []string{n.url}, User: "admin", Password: rootPassword,
		ClientName: "narad-e2e", Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// adminRequest is a GET of path on n as root.
func adminRequest(n *node, path string) *http.Request {
	req, _ := http.NewRequest(http.MethodGet, n.url+path, nil)
	req.SetBasicAuth("admin", rootPassword)
	return req
}

// asAdmin sends one request as root to n, as call does, within a minute.
func asAdmin(t *testing.T, n *node, method, path, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, n.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("admin", rootPassword)
	if method != http.MethodGet && method != http.MethodDelete {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Narad-Client", "e2e")
	resp, err := remoteHTTP.Do(req)
	if err != nil {
		t.Fatalf("%s %s on %s: %v", method, path, n.url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, body: string(b), header: resp.Header}
}

// attach creates the remote child orders-b under orders (api.md §2.10.2).
// While the nodes have no remote plane the attach answers exactly 501,
// and the test is skipped: it runs for real once remote children ship.
func (p *remotePair) attach(t *testing.T, from string, lanes int) answer {
	t.Helper()
	a := asAdmin(t, p.a[0], "POST", "/v1/topics/"+remoteTopic+"/children",
		fmt.Sprintf(`{"child":%q,"remote":%q,"remote_topic":%q,"from":%q,"lanes":%d}`, remoteChild, remoteName, remoteTopic, from, lanes))
	skipWithoutRemoteChildren(t, "attach", a)
	a.want(t, "attach the remote child", 201, "")
	return a
}

// skipWithoutRemoteChildren skips the test when a remote-child route
// answered exactly 501 (api.md §2.10.2: no remote plane on this node).
func skipWithoutRemoteChildren(t *testing.T, what string, a answer) {
	t.Helper()
	if a.status == http.StatusNotImplemented {
		t.Skipf("remote children are not built yet: %s answered 501 %s", what, strings.TrimSpace(a.body))
	}
}

// remoteChildRow is the remote child's entry of the children listing
// (api.md §2.11).
type remoteChildRow struct {
	Name        string          `json:"name"`
	LagMessages int64           `json:"lag_messages"`
	LagComplete bool            `json:"lag_complete"`
	State       string          `json:"state"`
	Paused      bool            `json:"paused"`
	BlockedAt   json.RawMessage `json:"blocked_at"`
	Partitions  []struct {
		Partition int    `json:"partition"`
		Node      string `json:"node"`
		State     string `json:"state"`
	} `json:"partitions"`
	raw string
}

// child reads orders-b's row of A's children listing through n.
func (p *remotePair) child(t *testing.T, n *node) (remoteChildRow, bool) {
	t.Helper()
	a := asAdmin(t, n, "GET", "/v1/topics/"+remoteTopic+"/children?partitions=true", "")
	var l struct {
		Children []json.RawMessage `json:"children"`
	}
	if a.status != http.StatusOK || json.Unmarshal([]byte(a.body), &l) != nil {
		return remoteChildRow{raw: fmt.Sprintf("%d %s", a.status, a.body)}, false
	}
	for _, raw := range l.Children {
		var r remoteChildRow
		if json.Unmarshal(raw, &r) == nil && r.Name == remoteChild {
			r.raw = string(raw)
			return r, true
		}
	}
	return remoteChildRow{raw: a.body}, false
}

// waitChild polls the listing through n until ok holds for the row.
func (p *remotePair) waitChild(t *testing.T, n *node, what string, within time.Duration, ok func(remoteChildRow) bool) remoteChildRow {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r, found := p.child(t, n)
		if found && ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last listing row: %s", what, within, r.raw)
		}
		time.Sleep(100 * time.Millisecond) // polling the listing, bounded by the deadline
	}
}

// dropCounts sums, over A's running nodes, the records orders-b never got
// by falling behind (narad_fanout_child_dropped_messages) or by an admin's
// skip (narad_fanout_remote_skipped_records_total), api.md §7.
func (p *remotePair) dropCounts(t *testing.T) (dropped, skipped float64) {
	t.Helper()
	for _, n := range p.a {
		select {
		case <-n.done:
			continue
		default:
		}
		a := asAdmin(t, n, "GET", "/metrics", "")
		sc := bufio.NewScanner(strings.NewReader(a.body))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if !strings.Contains(line, `child="`+remoteChild+`"`) {
				continue
			}
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			switch {
			case err != nil:
			case strings.HasPrefix(line, "narad_fanout_child_dropped_messages{"):
				dropped += v
			case strings.HasPrefix(line, "narad_fanout_remote_skipped_records_total{"):
				skipped += v
			}
		}
	}
	return dropped, skipped
}

// setEnv replaces (or adds) key in the node's environment for its next
// start; unset drops it.
func setEnv(n *node, key, value string, unset bool) {
	kept := n.env[:0:0]
	for _, kv := range n.env {
		if !strings.HasPrefix(kv, key+"=") {
			kept = append(kept, kv)
		}
	}
	if !unset {
		kept = append(kept, key+"="+value)
	}
	n.env = kept
}

// waitRunning waits until the link runs with nothing left to ship: state
// running and a complete lag of 0 (api.md §2.11).
func (p *remotePair) waitRunning(t *testing.T, within time.Duration) remoteChildRow {
	t.Helper()
	return p.waitChild(t, p.liveA(), "the link runs with lag 0", within, func(r remoteChildRow) bool {
		return r.State == "running" && r.LagComplete && r.LagMessages == 0
	})
}

// childRoute posts body to orders-b's pause, resume or skip route
// (api.md §2.12.1) through n. A resume re-runs the target checks, which a
// member refuses with 429 and Retry-After while a check of the remote ran
// less than 5 s ago (api.md §2.10.2); such an answer is retried for up to
// 30 s.
func (p *remotePair) childRoute(t *testing.T, n *node, verb, body string) answer {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		a := asAdmin(t, n, "POST", "/v1/topics/"+remoteTopic+"/children/"+remoteChild+"/"+verb, body)
		if a.status != http.StatusTooManyRequests || time.Now().After(deadline) {
			return a
		}
		wait := time.Second
		if secs, err := strconv.Atoi(a.header.Get("Retry-After")); err == nil && secs > 0 && secs <= 10 {
			wait = time.Duration(secs) * time.Second
		}
		time.Sleep(wait) // the rate limit's own Retry-After, bounded by the deadline
	}
}
