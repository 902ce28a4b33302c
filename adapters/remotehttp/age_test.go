package remotehttp_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/remotehttp"
	"github.com/narad/narad/ports"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// agedClient is a client of ts whose connections age by clock, with a
// conn_max_age_ms of one second.
func agedClient(t *testing.T, ts *testServer, clock *fakeClock) ports.RemoteClient {
	t.Helper()
	ep := ts.endpoint("")
	ep.Limits = limits(time.Minute)
	ep.Limits.ConnMaxAgeMs = 1000
	c := newClient(t, newTransport(t, ts.loopbackOptions()), ep)
	remotehttp.SetClock(c, clock.Now)
	return c
}

// ensure that an idle connection past conn_max_age_ms is not reused: the
// next request opens a new one and the old one is closed
// (internals.md §7.7).
func TestConnMaxAgeReplacesIdleConnection(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, &recorder{})
	clock := &fakeClock{now: time.Unix(1_000_000, 0)}
	c := agedClient(t, ts, clock)
	get := func() {
		t.Helper()
		if _, err := c.Do(context.Background(), ports.RemoteRequest{Method: http.MethodGet}); err != nil {
			t.Fatal(err)
		}
	}
	get()
	clock.advance(999 * time.Millisecond)
	get()
	if n := ts.conns.Load(); n != 1 {
		t.Fatalf("%d connections before the age, want 1", n)
	}
	clock.advance(time.Millisecond)
	get()
	if n := ts.conns.Load(); n != 2 {
		t.Fatalf("%d connections after the age, want 2", n)
	}
	waitFor(t, "the aged connection to close", func() bool { return ts.closed.Load() == 1 })
}

// ensure that a connection busy when it reaches its age finishes its
// request and then closes, while requests after the age use a new one.
func TestConnMaxAgeClosesBusyConnectionAfterRequest(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, _ *http.Request) {
		started <- struct{}{}
		<-release
		_, _ = w.Write([]byte("slow"))
	})
	mux.Handle("/", &recorder{})
	ts := newTestServer(t, mux)
	clock := &fakeClock{now: time.Unix(1_000_000, 0)}
	c := agedClient(t, ts, clock)

	slow := make(chan error, 1)
	go func() {
		answer, err := c.Do(context.Background(), ports.RemoteRequest{Method: http.MethodGet, Path: "/slow"})
		if err == nil && string(answer.Body) != "slow" {
			err = fmt.Errorf("slow answer %q", answer.Body)
		}
		slow <- err
	}()
	<-started
	clock.advance(2 * time.Second)
	if _, err := c.Do(context.Background(), ports.RemoteRequest{Method: http.MethodGet}); err != nil {
		t.Fatal(err)
	}
	if n := ts.conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2 (the busy one and a new one)", n)
	}
	if n := ts.closed.Load(); n != 0 {
		t.Fatalf("%d connections closed while the old one is busy", n)
	}
	close(release)
	if err := <-slow; err != nil {
		t.Fatalf("the busy request failed: %v", err)
	}
	waitFor(t, "the busy aged connection to close after its request", func() bool { return ts.closed.Load() == 1 })
	if _, err := c.Do(context.Background(), ports.RemoteRequest{Method: http.MethodGet}); err != nil {
		t.Fatal(err)
	}
	if n := ts.conns.Load(); n != 2 {
		t.Fatalf("%d connections, want the young one reused", n)
	}
}
