package vfs

import (
	"testing"

	"go.uber.org/goleak"
)

// ensure that no test leaves an io_uring reaper goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
