package quicpeer

import (
	"testing"

	"go.uber.org/goleak"
)

// ensure that no test leaves a connection, stream, dial or handler goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
