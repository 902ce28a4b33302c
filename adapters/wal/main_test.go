package wal

import (
	"testing"

	"go.uber.org/goleak"
)

// ensure that no test leaves a sync loop or flusher goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
