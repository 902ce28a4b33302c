package openapi

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes the kernel kill cmd when the test process dies, so a
// test binary that is killed (a -timeout panic) leaves no node running.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
