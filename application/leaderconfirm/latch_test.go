package leaderconfirm_test

import (
	"context"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/domain/meta"
)

// Ensure that the ownership latch stays unset until the replica has caught
// up (a leader also passing a barrier), then never clears.
func TestLatch(t *testing.T) {
	t.Parallel()
	s := fake.NewMetaStore()
	l := leaderconfirm.NewLatch(s)
	ctx := context.Background()
	s.SetCaughtUp(false)
	if l.Ready(ctx) {
		t.Fatal("latched before catching up")
	}
	s.SetCaughtUp(true)
	s.FailBarrier(meta.ErrUnavailable)
	if l.Ready(ctx) {
		t.Fatal("leader latched without a barrier")
	}
	s.FailBarrier(nil)
	if !l.Ready(ctx) {
		t.Fatal("not latched once caught up")
	}
	s.SetCaughtUp(false)
	if !l.Ready(ctx) {
		t.Fatal("latch cleared")
	}
}
