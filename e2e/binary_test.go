package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
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

// build compiles cmd/narad the way the Taskfile does, stamping a version.
func build(out string) int {
	cmd := exec.Command("go", "build", "-o", out,
		"-ldflags", "-X github.com/narad/narad/bootstrap.version=e2e -X github.com/narad/narad/bootstrap.commit=feedface",
		"../cmd/narad")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
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
