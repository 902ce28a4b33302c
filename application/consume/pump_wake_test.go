package consume

import (
	"context"
	"testing"
	"time"
)

// kicked drains the pump's kick and reports whether it was set.
func kicked(p *pump) bool {
	select {
	case <-p.kick:
		return true
	default:
		return false
	}
}

// ensure that a change of one topic sends the pump round only when that
// topic has parked consumers or delivery tokens here: a busy topic nobody
// waits on costs the pump nothing while another topic's consumers wait
// (internals.md §5.4).
func TestWakeKicksThePumpOnlyForAWatchedTopic(t *testing.T) {
	s := &Service{tokens: newTokenBook()}
	p := newPump(s)
	p.wake("orders")
	if kicked(p) {
		t.Fatal("a change kicked the pump with nobody parked and no token held")
	}
	w := &waiter{ctx: context.Background(), topic: "orders", reply: make(chan answer, 1)}
	p.join(w)
	if !kicked(p) {
		t.Fatal("a consumer joining did not kick the pump")
	}
	p.wake("busy")
	if kicked(p) {
		t.Fatal("a change of a topic nobody waits on kicked the pump")
	}
	p.wake("orders")
	if !kicked(p) {
		t.Fatal("a change of the waited-on topic did not kick the pump")
	}
	s.tokens.register("node-2", "busy", time.Minute, time.Unix(1_800_000_000, 0))
	p.wake("busy")
	if !kicked(p) {
		t.Fatal("a change of a topic holding another node's token did not kick the pump")
	}
	s.tokens.drop("busy")
	p.remove(w)
	p.wake("orders")
	p.wake("busy")
	if kicked(p) {
		t.Fatal("a change kicked the pump after its consumer left and its token went")
	}
}
