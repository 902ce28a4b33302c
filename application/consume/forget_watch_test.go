package consume_test

import (
	"context"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// ensure that a delete applied through the metadata log alone (no direct
// Forget call, as on a node that did not serve the delete) drops the
// incarnation's consumer state: parked consumers are answered at once (F29).
func TestForgetDeletedFollowsTheMetadataLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	e.run()
	e.followMetadata()

	tp := e.createTopic("orders", 1, nil, nil)
	got := e.longPoll(t.Context(), consume.Request{Topic: "orders", Wait: 10 * time.Second})
	e.parked(1)
	e.propose(&meta.DeleteTopicIf{Name: tp.Name, ID: tp.ID})
	if r := <-got; r.err != nil || len(r.ds) != 0 || r.at > 5*time.Second {
		t.Fatalf("parked consumer after the delete: %+v", r)
	}
}

// ensure that a member's heartbeat, applied every few seconds, does not
// send the pump round every topic with parked consumers, while any other
// applied entry does (a partition placed here, a limit raised).
func TestForgetDeletedLeavesThePumpAloneOnHeartbeats(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{}) // the pump does not run: the request stays for the test to read
	w := &stepWatcher{c: make(chan ports.MetaChange)}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.svc.ForgetDeleted(ctx, w) }()
	t.Cleanup(func() { cancel(); <-done })

	beat := ports.MetaChange{Envelope: meta.Envelope{Event: &meta.MemberHeartbeat{ID: "n2"}}}
	// An unbuffered channel: a send returns once the loop took the change,
	// so the change sent before it was handled whole.
	w.c <- beat
	w.c <- beat
	consume.TakeLookAtEverything(e.svc) // the subscription's own look, and any from the beats so far
	w.c <- beat
	w.c <- beat
	if consume.TakeLookAtEverything(e.svc) {
		t.Fatal("a heartbeat sent the pump round every topic")
	}
	w.c <- ports.MetaChange{Envelope: meta.Envelope{Event: &meta.AssignPartition{Topic: "orders"}}}
	w.c <- beat
	if !consume.TakeLookAtEverything(e.svc) {
		t.Fatal("an applied entry other than a heartbeat left the pump alone")
	}
}

// stepWatcher hands out one subscription over its unbuffered channel.
type stepWatcher struct{ c chan ports.MetaChange }

func (w *stepWatcher) Watch(int) (ports.MetaSubscription, error) { return w, nil }
func (w *stepWatcher) C() <-chan ports.MetaChange                { return w.c }
func (w *stepWatcher) Err() error                                { return nil }
func (w *stepWatcher) Close()                                    {}
