//go:build !linux

package openapi

import "os/exec"

// dieWithTest is a no-op where the kernel offers no parent-death signal;
// t.Cleanup still kills the node when the test ends.
func dieWithTest(*exec.Cmd) {}
