package pause_test

import (
	"context"
	"testing"
	"time"

	"github.com/narad/narad/application/pause"
)

// For reports a full wait, a cancelled context, and a non-positive wait.
func TestFor(t *testing.T) {
	if !pause.For(context.Background(), time.Millisecond) {
		t.Fatal("a full wait reported cut short")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if pause.For(ctx, time.Hour) {
		t.Fatal("a cancelled wait reported full")
	}
	if !pause.For(context.Background(), 0) || pause.For(ctx, 0) {
		t.Fatal("a zero wait must report whether the context lives")
	}
}
