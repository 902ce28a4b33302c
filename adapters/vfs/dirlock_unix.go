//go:build unix

package vfs

import (
	"os"
	"syscall"
)

var errWouldBlock error = syscall.EWOULDBLOCK

// lockFile takes flock(LOCK_EX|LOCK_NB): a second holder fails at once.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			return err
		}
	}
}
