package consume_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// countingTopics counts the service's topic reads by name.
type countingTopics struct {
	ports.MetadataTopics
	mu    sync.Mutex
	reads map[string]int
}

func (c *countingTopics) Topic(name string) (meta.Topic, bool, error) {
	c.mu.Lock()
	c.reads[name]++
	c.mu.Unlock()
	return c.MetadataTopics.Topic(name)
}

func (c *countingTopics) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads[name]
}

// ensure that handing records to one topic's parked consumers does not
// send the pump through other topics whose consumers wait for nothing new:
// a round looks only at the topics named since the last one (internals.md
// §5.4), so a hand-off costs the same however many topics have consumers
// parked.
func TestHandOffLooksOnlyAtTheNamedTopic(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	e.run()
	tp := e.createTopic("orders", 3, nil, nil)
	e.createTopic("idle", 3, nil, nil)
	ctx, cancel := context.WithCancel(t.Context())
	idle := e.longPoll(ctx, consume.Request{Topic: "idle", Wait: time.Minute})
	e.parked(1)
	before := e.topicReads.count("idle")
	const handOffs = 20
	for i := range handOffs {
		got := e.longPoll(t.Context(), consume.Request{Topic: "orders", Wait: 10 * time.Second})
		e.parked(2)
		e.produce(tp, int32(i%3), "m")
		if r := <-got; r.err != nil || len(r.ds) != 1 {
			t.Fatalf("hand-off %d: %+v", i, r)
		}
	}
	if n := e.topicReads.count("idle") - before; n > 2 {
		t.Fatalf("%d hand-offs on orders read the idle topic %d times", handOffs, n)
	}
	cancel()
	if r := <-idle; len(r.ds) != 0 {
		t.Fatalf("the idle consumer got %+v", r)
	}
}

// ensure that a metadata change sends the pump through every waiting
// topic: a consumer parked behind a full in-flight window is served as
// soon as the window is raised, not when its wait runs out.
func TestRaisedInFlightLimitServesAParkedConsumer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	e.run()
	e.followMetadata()
	got := e.parkBehindAFullWindow()
	e.raiseWindow("orders")
	if r := <-got; r.err != nil || len(r.ds) != 1 || string(r.ds[0].Record.Payload) != "second" || r.at > 5*time.Second {
		t.Fatalf("parked consumer after the window grew: %+v", r)
	}
}

// ensure that what changed while nobody followed the metadata log (before
// the watch started, or while it lagged and re-subscribed) is looked at
// when the watch (re)starts.
func TestMetadataWatchStartLooksAtEveryWaitingTopic(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	e.run()
	got := e.parkBehindAFullWindow()
	e.raiseWindow("orders")
	e.followMetadata()
	if r := <-got; r.err != nil || len(r.ds) != 1 || r.at > 5*time.Second {
		t.Fatalf("parked consumer after the watch started: %+v", r)
	}
}

// parkBehindAFullWindow creates "orders" with an in-flight window of one,
// leases its first record and parks a long poll for the second.
func (e *env) parkBehindAFullWindow() <-chan result {
	e.t.Helper()
	tp := e.createTopic("orders", 1, func(ct *meta.CreateTopic) { ct.MaxInFlight = 1 }, nil)
	e.produce(tp, 0, "first", "second")
	if ds := e.consume(consume.Request{Topic: "orders"}); len(ds) != 1 {
		e.t.Fatalf("first consume: %d records", len(ds))
	}
	got := e.longPoll(e.t.Context(), consume.Request{Topic: "orders", Wait: 10 * time.Second})
	e.parked(1)
	return got
}

// raiseWindow raises a topic's in-flight window to 10 through the metadata
// log alone.
func (e *env) raiseWindow(name string) {
	e.t.Helper()
	tp, _, _ := e.meta.Topic(name)
	e.propose(&meta.UpdateTopicIf{ID: tp.ID, UpdateTopic: meta.UpdateTopic{Name: tp.Name, Partitions: tp.Partitions,
		RetentionMs: tp.RetentionMs, MaxInFlight: 10, MaxAckedAhead: tp.MaxAckedAhead}})
}

// ensure that the route re-check of a topic with no local partition looks
// at that topic alone, not at every topic with consumers parked.
func TestRouteRecheckLooksOnlyAtTheRoutelessTopic(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	e.run()
	e.createTopic("idle", 3, nil, nil)
	e.createTopic("far", 1, nil, func(int32) string { return "" })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	idle := e.longPoll(ctx, consume.Request{Topic: "idle", Wait: time.Minute})
	far := e.longPoll(ctx, consume.Request{Topic: "far", Wait: time.Minute})
	e.parked(2)
	idleBefore, farBefore := e.topicReads.count("idle"), e.topicReads.count("far")
	const rechecks = 5
	eventually(t, 10*time.Second, "route re-checks of the unplaced topic",
		func() bool { return e.topicReads.count("far")-farBefore >= rechecks })
	if n := e.topicReads.count("idle") - idleBefore; n > 1 {
		t.Fatalf("%d route re-checks of far read the idle topic %d times", rechecks, n)
	}
	cancel()
	<-idle
	<-far
}
