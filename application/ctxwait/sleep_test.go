package ctxwait_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/narad/narad/application/ctxwait"
)

// ensure that a sleep runs its time on a live context, ends at once on a
// cancelled one (answering its error), and that no wait asked answers
// whether the context is live.
func TestSleep(t *testing.T) {
	t.Parallel()
	if !ctxwait.Sleep(context.Background(), time.Millisecond) || ctxwait.SleepErr(context.Background(), 0) != nil {
		t.Fatal("a live context cut a sleep short")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ctxwait.Sleep(ctx, time.Hour) || ctxwait.Sleep(ctx, 0) {
		t.Fatal("a cancelled context let a sleep run")
	}
	if err := ctxwait.SleepErr(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("SleepErr: %v", err)
	}
}
