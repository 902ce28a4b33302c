package fanout

import (
	"context"
	"time"
)

// waitFor waits until ch closes, d passes or ctx ends; it reports whether
// ch closed.
func waitFor(ctx context.Context, ch <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}
