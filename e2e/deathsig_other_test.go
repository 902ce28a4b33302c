//go:build !linux

package e2e

import "os/exec"

// dieWithTest is Linux's parent-death signal; elsewhere nothing.
func dieWithTest(*exec.Cmd) {}
