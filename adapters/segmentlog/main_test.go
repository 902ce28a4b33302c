package segmentlog

import (
	"testing"

	"go.uber.org/goleak"
)

// ensure that no test leaves a flusher, reaper or scanner goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
