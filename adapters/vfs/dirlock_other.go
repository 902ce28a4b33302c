//go:build !unix

package vfs

import (
	"errors"
	"os"
)

var errWouldBlock = errors.New("vfs: lock would block")

// lockFile is a no-op where flock is not available: Narad's supported
// platforms (Linux, macOS) all take the unix path.
func lockFile(*os.File) error { return nil }
