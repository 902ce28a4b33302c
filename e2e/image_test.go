package e2e

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// ensure that the image runs as an unprivileged numeric user and that
// `docker run -e NARAD_ADMIN_PASSWORD=... -p ...:7942 narad`, the README's
// line, gives a secured node writing its data volume.
func TestImageRunsSecuredAsNonRoot(t *testing.T) {
	needDocker(t)
	c := &dockerCluster{t: t, prefix: fmt.Sprintf("narad-e2e-img-%d-%d", os.Getpid(), time.Now().UnixNano()%1_000_000)}
	c.buildImage()
	nd := &dockerNode{id: "single", container: c.prefix + "-single", port: freePorts(t)}
	nd.url = fmt.Sprintf("http://127.0.0.1:%d", nd.port)
	c.nodes = append(c.nodes, nd)
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := dockerOut("logs", "--tail", "60", nd.container)
			t.Logf("container logs:\n%s", out)
		}
		_, _ = dockerOut("rm", "-f", "-v", nd.container)
		_, _ = dockerOut("rmi", "-f", c.image)
	})
	if user := c.docker("image", "inspect", "--format", "{{.Config.User}}", c.image); user != "65532:65532" {
		t.Fatalf("image user %q, want 65532:65532", user)
	}
	c.docker("run", "-d", "--name", nd.container, "-e", "NARAD_ADMIN_PASSWORD="+rootPassword,
		"-p", fmt.Sprintf("127.0.0.1:%d:7942", nd.port), c.image)
	c.waitReady(nd)
	waitSignIn(t, nd.url, "admin", rootPassword)
	call(t, nd.url, "", "", "GET", "/v1/topics", "").want(t, "no credentials", 401, "authentication required")
	call(t, nd.url, "admin", rootPassword, "POST", "/v1/topics", `{"name":"orders"}`).want(t, "root creates a topic", 201, "")
	call(t, nd.url, "admin", rootPassword, "POST", "/v1/topics/orders/produce", "m").want(t, "root produces", 202, "")
}
