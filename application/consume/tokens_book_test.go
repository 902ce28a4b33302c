package consume

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// ensure that a pump round named for some topics tidies and offers the
// tokens of those topics only: another topic's expired token waits for a
// round that looks at everything (internals.md §5.4: a round costs what the
// named topics cost).
func TestTokenRoundLooksOnlyAtNamedTopics(t *testing.T) {
	b := newTokenBook()
	t0 := time.Unix(1_800_000_000, 0)
	b.register("node-2", "expired", time.Second, t0)
	b.register("node-2", "live", time.Minute, t0)
	b.register("node-2", "unnamed", time.Second, t0)
	now := t0.Add(2 * time.Second)
	if got := b.among([]string{"expired", "live", "unknown"}, now); !slices.Equal(got, []string{"live"}) {
		t.Fatalf("named round offers %v; want [live]", got)
	}
	if b.has("expired") {
		t.Fatal("a named topic whose only token expired is still held")
	}
	if !b.has("unnamed") {
		t.Fatal("a named round tidied a topic nobody named")
	}
	if got := b.offerable(now); !slices.Equal(got, []string{"live"}) {
		t.Fatalf("full round offers %v; want [live]", got)
	}
	if b.has("unnamed") {
		t.Fatal("a full round kept a topic whose only token expired")
	}
}

// ensure that the pump's sleep finds the earliest hold deadline, and none
// once every hold is retired.
func TestTokenWakeAtFollowsHolds(t *testing.T) {
	b := newTokenBook()
	t0 := time.Unix(1_800_000_000, 0)
	if at := b.wakeAt(); !at.IsZero() {
		t.Fatalf("wakeAt %v with no holds", at)
	}
	b.hold("a", t0.Add(2*time.Second))
	b.hold("b", t0.Add(time.Second))
	if at := b.wakeAt(); !at.Equal(t0.Add(time.Second)) {
		t.Fatalf("wakeAt %v; want the earliest hold", at)
	}
	b.retire("a")
	b.retire("b")
	if at := b.wakeAt(); !at.IsZero() {
		t.Fatalf("wakeAt %v after every hold was retired", at)
	}
}

// BenchmarkTokenRound measures what one pump round named for one topic
// spends on the token book while other topics hold tokens here (other
// nodes' consumers waiting on topics that take no traffic).
func BenchmarkTokenRound(b *testing.B) {
	for _, topics := range []int{1, 1000} {
		b.Run(fmt.Sprintf("token_topics=%d", topics), func(b *testing.B) {
			book := newTokenBook()
			now := time.Unix(1_800_000_000, 0)
			for i := range topics {
				book.register("node-2", fmt.Sprintf("t%d", i), time.Hour, now)
			}
			named := []string{"t0"}
			b.ReportAllocs()
			for b.Loop() {
				_ = book.among(named, now)
				_ = book.wakeAt()
			}
		})
	}
}
