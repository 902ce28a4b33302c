package ctxwait

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends: false then. A d of zero or less does not
// wait, and answers whether ctx is still live.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// SleepErr is Sleep answering ctx.Err() when ctx ended first, nil otherwise.
func SleepErr(ctx context.Context, d time.Duration) error {
	if !Sleep(ctx, d) {
		return ctx.Err()
	}
	return nil
}
