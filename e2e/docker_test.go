package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dockerCmdTimeout bounds one docker CLI call.
const dockerCmdTimeout = 2 * time.Minute

// dockerCluster is a Narad cluster of containers on a private bridge
// network, built FROM scratch with the e2e binary (nothing is pulled). Each
// node's client port is published on a loopback port of the host.
type dockerCluster struct {
	t       *testing.T
	prefix  string // names the image, the network and the containers
	image   string
	network string
	nodes   []*dockerNode
	initial int // the first initial nodes bootstrap the cluster
}

// dockerNode is one container. Its client port is published on a fixed
// loopback port, so its url survives restarts and network cuts.
type dockerNode struct {
	id        string
	container string
	port      int
	url       string
	started   bool
}

// needDocker skips the test, saying why, when no Docker engine answers.
func needDocker(t *testing.T) {
	t.Helper()
	out, err := dockerOut("version", "--format", "{{.Server.Version}}")
	if err != nil {
		t.Skipf("container e2e skipped: no Docker engine answers here (%v: %s)", err, strings.TrimSpace(out))
	}
}

// docker runs the docker CLI, failing the test on error.
func (c *dockerCluster) docker(args ...string) string {
	c.t.Helper()
	out, err := dockerOut(args...)
	if err != nil {
		c.t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(out)
}

func dockerOut(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dockerCmdTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	return string(out), err
}

// startDockerCluster builds the image, creates the network and starts n
// nodes that bootstrap one Raft cluster, then waits until all are ready.
// Cleanup removes every container (with its volume), the network and the
// image, dumping the nodes' logs when the test failed.
func startDockerCluster(t *testing.T, n int) *dockerCluster {
	t.Helper()
	c := newDockerCluster(t, n, n)
	for _, nd := range c.nodes {
		c.run(nd)
	}
	for _, nd := range c.nodes {
		c.waitReady(nd)
	}
	return c
}

// newDockerCluster builds the image and creates the network for total
// nodes, the first initial of which bootstrap the Raft cluster together;
// the others join when run. Nothing is started.
func newDockerCluster(t *testing.T, total, initial int) *dockerCluster {
	t.Helper()
	needDocker(t)
	c := &dockerCluster{t: t, prefix: fmt.Sprintf("narad-e2e-%d-%d", os.Getpid(), time.Now().UnixNano()%1_000_000), initial: initial}
	c.buildImage()
	c.network = c.prefix
	c.docker("network", "create", c.network)
	t.Cleanup(c.remove)
	for i := range total {
		port := freePorts(t)
		c.nodes = append(c.nodes, &dockerNode{id: fmt.Sprintf("n%d", i+1), container: fmt.Sprintf("%s-n%d", c.prefix, i+1),
			port: port, url: fmt.Sprintf("http://127.0.0.1:%d", port)})
	}
	return c
}

// run starts nd's container. A node of the bootstrap set knows that set;
// a later one knows it and itself, and joins.
func (c *dockerCluster) run(nd *dockerNode) {
	c.t.Helper()
	var peers, initial []string
	for i, other := range c.nodes {
		if i < c.initial || other == nd {
			peers = append(peers, fmt.Sprintf("%s@%s:7943", other.id, other.container))
		}
		if i < c.initial {
			initial = append(initial, other.id)
		}
	}
	c.docker("run", "-d", "--name", nd.container, "--hostname", nd.container, "--network", c.network,
		"-p", fmt.Sprintf("127.0.0.1:%d:7942", nd.port),
		"-e", "NARAD_NODE_ID="+nd.id,
		"-e", "NARAD_CLUSTER_PEERS="+strings.Join(peers, ","),
		"-e", "NARAD_CLUSTER_INITIAL_MEMBERS="+strings.Join(initial, ","),
		"-e", "NARAD_CLUSTER_SECRET="+clusterSecret,
		"-e", "NARAD_SECURITY_ENABLED=false",
		"-e", "NARAD_SECURITY_ALLOW_INSECURE_CLUSTER=true",
		"-e", "NARAD_HTTP_ADDR=:7942",
		"-e", "NARAD_CLUSTER_ADDR=:7943",
		"-e", "NARAD_LOG_LEVEL=warn",
		c.image, "serve")
	nd.started = true
}

// buildImage builds the repository's image (../Dockerfile, FROM scratch,
// an unprivileged user) around the e2e binary: the context is what
// `go tool -modfile=tools.mod task build` leaves in bin/ (the binary and an empty data
// directory).
func (c *dockerCluster) buildImage() {
	c.t.Helper()
	dir := c.t.TempDir()
	bin, err := os.ReadFile(naradBin)
	if err != nil {
		c.t.Fatal(err)
	}
	dockerfile, err := os.ReadFile("../Dockerfile")
	if err != nil {
		c.t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "bin", "data"), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "narad"), bin, 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), dockerfile, 0o644); err != nil {
		c.t.Fatal(err)
	}
	// The repository's .dockerignore too, so the build sees exactly what
	// `task image` sends.
	ignore, err := os.ReadFile("../.dockerignore")
	if err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".dockerignore"), ignore, 0o644); err != nil {
		c.t.Fatal(err)
	}
	c.image = c.prefix + ":e2e"
	c.docker("build", "-q", "-t", c.image, dir)
}

// waitReady polls the node's /readyz.
func (c *dockerCluster) waitReady(nd *dockerNode) {
	c.t.Helper()
	deadline := time.Now().Add(nodeReadyTimeout)
	for {
		if readyz(nd.url) {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("container %s never became ready", nd.container)
		}
		time.Sleep(100 * time.Millisecond) // polling the container, bounded by the deadline
	}
}

// kill sends SIGKILL to the container (`docker kill`).
func (c *dockerCluster) kill(nd *dockerNode) { c.docker("kill", nd.container) }

// restart starts a killed container over the same volume and waits until
// it is ready again.
func (c *dockerCluster) restart(nd *dockerNode) {
	c.docker("start", nd.container)
	c.waitReady(nd)
}

// cut disconnects the container from the cluster network; heal reconnects
// it. While cut, the node reaches no peer and no client reaches it.
func (c *dockerCluster) cut(nd *dockerNode) {
	c.docker("network", "disconnect", c.network, nd.container)
}
func (c *dockerCluster) heal(nd *dockerNode) { c.docker("network", "connect", c.network, nd.container) }

// asNodes presents the containers as the e2e suite's nodes (url and port
// only), so the workload, the ledger and the metric probes drive them
// unchanged.
func (c *dockerCluster) asNodes() []*node {
	out := make([]*node, len(c.nodes))
	for i, nd := range c.nodes {
		out[i] = &node{t: c.t, port: nd.port, url: nd.url}
	}
	return out
}

func (c *dockerCluster) remove() {
	for _, nd := range c.nodes {
		if !nd.started {
			continue
		}
		if c.t.Failed() {
			out, _ := dockerOut("logs", "--tail", "60", nd.container)
			c.t.Logf("container %s logs:\n%s", nd.container, out)
		}
		_, _ = dockerOut("rm", "-f", "-v", nd.container)
	}
	_, _ = dockerOut("network", "rm", c.network)
	_, _ = dockerOut("rmi", "-f", c.image)
}

// readyz reports whether url's /readyz answers 200.
func readyz(url string) bool {
	client := http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(url + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
