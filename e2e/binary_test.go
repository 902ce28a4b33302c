package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	// The binary under test is built by TestMain with `go build`, which the
	// test cache cannot see; linking the server's packages into the test
	// binary makes any change to them invalidate a cached e2e result.
	_ "github.com/narad/narad/bootstrap"
)

// naradBin is the binary built once for the whole test run.
var naradBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "narad-e2e-")
	if err != nil {
		panic(err)
	}
	naradBin = filepath.Join(dir, "narad")
	code := build(naradBin)
	if code == 0 {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// raceBinaryEnv, set to 1, builds the binary under the race detector, so
// the broker's own data races surface in the nodes' logs (and fail the test
// that ran them). Off by default: the race build needs cgo.
const raceBinaryEnv = "NARAD_E2E_RACE_BINARY"

// build compiles cmd/narad the way the Taskfile does, stamping a version.
func build(out string) int {
	args := []string{"build", "-o", out,
		"-ldflags", "-X github.com/narad/narad/bootstrap.version=e2e -X github.com/narad/narad/bootstrap.commit=feedface"}
	cgo := "CGO_ENABLED=0"
	if os.Getenv(raceBinaryEnv) == "1" {
		args, cgo = append(args, "-race"), "CGO_ENABLED=1"
	}
	cmd := exec.Command("go", append(args, "../cmd/narad")...)
	cmd.Env = append(os.Environ(), cgo)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return 1
	}
	return 0
}

// ensure that the built binary reports the link-time version and commit and its Go version.
func TestVersionOfBuiltBinary(t *testing.T) {
	out, err := exec.Command(naradBin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("narad version: %v\n%s", err, out)
	}
	want := "version: e2e\ncommit:  feedface\ngo:      " + runtime.Version() + "\n"
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

// ensure that a plain go build in a git checkout, without the Taskfile's
// link-time flags, reports the checkout's revision and pseudo-version
// (issue 17). -buildvcs=true is the go command's default in a checkout;
// it is spelled out because a machine's GOFLAGS may turn it off.
func TestVersionOfAPlainGoBuild(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	rev := strings.TrimSpace(string(head))
	bin := filepath.Join(t.TempDir(), "narad")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "../cmd/narad")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("narad version: %v\n%s", err, out)
	}
	lines := strings.Split(string(out), "\n")
	version := strings.TrimSpace(strings.TrimPrefix(lines[0], "version:"))
	commit := strings.TrimSpace(strings.TrimPrefix(lines[1], "commit:"))
	if commit != rev && commit != rev+"-dirty" {
		t.Fatalf("commit %q, want %s (or -dirty)\n%s", commit, rev, out)
	}
	if !strings.HasPrefix(version, "v") {
		t.Fatalf("version %q is not the module's version from the VCS stamp\n%s", version, out)
	}
}
