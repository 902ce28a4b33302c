package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// readmeSessions are the README's curl sessions a newcomer pastes into a
// shell, found by the line that introduces each.
var readmeSessions = []string{"A first session with curl", "Fan-out: a child topic"}

// ensure that the README's curl sessions work exactly as written against a
// dev node: every request succeeds (curl fails on any HTTP error status)
// and the ack finds the message the consume leased.
func TestReadmeCurlSessionsWork(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl on this machine")
	}
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	n := startNode(t, t.TempDir(), freePorts(t))
	var script strings.Builder
	// The newcomer's curl, failing on an HTTP error as the reader would
	// notice one.
	script.WriteString("set -eu\ncurl() { command curl --fail-with-body \"$@\"; }\n")
	for _, intro := range readmeSessions {
		block, err := shellBlockAfter(string(raw), intro)
		if err != nil {
			t.Fatal(err)
		}
		script.WriteString(strings.ReplaceAll(block, "localhost:7942", fmt.Sprintf("127.0.0.1:%d", n.port)) + "\n")
	}
	out, err := exec.Command("bash", "-c", script.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("the README's session failed: %v\n%s", err, out)
	}
	for _, want := range []string{"HTTP/1.1 202", `"payload":{"order_id":"ord_1"}`, "HTTP/1.1 204"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the session's output lacks %q:\n%s", want, out)
		}
	}
}

// shellBlockAfter returns the first ```sh block after the line holding
// intro.
func shellBlockAfter(doc, intro string) (string, error) {
	i := strings.Index(doc, intro)
	if i < 0 {
		return "", fmt.Errorf("the README has no %q", intro)
	}
	_, rest, ok := strings.Cut(doc[i:], "```sh\n")
	if !ok {
		return "", fmt.Errorf("no shell block after %q", intro)
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		return "", fmt.Errorf("an unclosed shell block after %q", intro)
	}
	return block, nil
}
