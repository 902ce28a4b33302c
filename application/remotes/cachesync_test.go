package remotes_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/domain/meta"
)

// A deleted remote's cache entry goes once the delete applies
// (internals.md §7.6), so it stops being reported as held (lingering).
func TestCacheFollowDropsDeletedRemotes(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	f.target(t)
	r := f.remote(t, "dr")
	if client, _ := f.cache.Client(r); client == nil {
		t.Fatal("no client for dr")
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { f.cache.Follow(ctx, f.meta) })
	defer func() { cancel(); wg.Wait() }()
	f.propose(t, &meta.DeleteRemote{Name: "dr", ID: r.ID})
	deadline := time.Now().Add(5 * time.Second)
	for len(f.cache.Held(nil)) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("still held: %+v", f.cache.Held(nil))
		}
		time.Sleep(time.Millisecond)
	}
}
