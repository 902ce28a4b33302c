package fanout_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/narad/narad/application/fanout"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

func lagOf(t *testing.T, r *fanout.LagReader, parent string, id domain.TopicID, parts []int32, children ...ports.ChildEpoch) []ports.CursorLag {
	t.Helper()
	got, err := r.FanoutLag(context.Background(), parent, id, parts, children)
	if err != nil {
		t.Fatalf("FanoutLag: %v", err)
	}
	if len(got) != len(parts)*len(children) {
		t.Fatalf("%d entries for %d partitions × %d children", len(got), len(parts), len(children))
	}
	return got
}

func reportedAt(next, hwm int64) ports.CursorLag {
	return ports.CursorLag{Reported: true, NextOffset: next, HighWatermark: hwm}
}

// ensure that a running cursor reports its position from memory once
// anchored, beside the parent's high watermark, and that after the copy its
// next offset reaches the watermark (api.md §2.11 lag_messages 0; op 17).
func TestLagOfARunningCursor(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.topic(t, "orders", 1, 1)
	e.topic(t, "audit", 2, 1)
	e.produce(t, "orders", 0, "before-1", "before-2")
	e.attach(t, "orders", "audit", topicID(90), 0, 2)
	e.start(t)
	r := fanout.NewLagReader(e.engine, e.logs)
	audit := ports.ChildEpoch{Child: "audit", Epoch: topicID(90)}
	eventually(t, "the cursor anchored at the attach point", func() bool {
		return reflect.DeepEqual(lagOf(t, r, "orders", "", []int32{0}, audit), []ports.CursorLag{reportedAt(2, 2)})
	})
	// The running cursor answers from memory: a file rewritten behind its
	// back does not change what it reports.
	e.cursors.Put(e.ref(t, "orders", 0), "audit", ports.FanoutCursor{Epoch: topicID(90), NextOffset: 0})
	if got := lagOf(t, r, "orders", domain.TopicID(topicID(1)), []int32{0}, audit); !reflect.DeepEqual(got, []ports.CursorLag{reportedAt(2, 2)}) {
		t.Fatalf("running cursor: %+v", got)
	}
	e.produce(t, "orders", 0, "after-1", "after-2", "after-3")
	eventually(t, "the copy to catch up", func() bool {
		return reflect.DeepEqual(lagOf(t, r, "orders", "", []int32{0}, audit), []ports.CursorLag{reportedAt(5, 5)})
	})
	// Asked at another epoch (an attach this replica has not seen, or an
	// older one), the running cursor reports nothing.
	stale := ports.ChildEpoch{Child: "audit", Epoch: topicID(91)}
	if got := lagOf(t, r, "orders", "", []int32{0}, stale); got[0].Reported {
		t.Fatalf("another epoch reported: %+v", got)
	}
}

// ensure that without a running cursor the file answers, but only at the
// epoch asked: no file, another epoch's or a corrupt one reports nothing;
// and that the answer is laid out partitions outer, children inner.
func TestLagFromCursorFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.topic(t, "orders", 1, 2)
	e.topic(t, "audit", 2, 1)
	e.topic(t, "billing", 3, 1)
	e.topic(t, "ledger", 4, 1)
	e.produce(t, "orders", 0, "a", "b", "c", "d")
	e.produce(t, "orders", 1, "e")
	r := fanout.NewLagReader(e.build(), e.logs) // never run: no cursor is running
	p0, p1 := e.ref(t, "orders", 0), e.ref(t, "orders", 1)
	e.cursors.Put(p0, "audit", ports.FanoutCursor{Epoch: topicID(90), NextOffset: 1})
	e.cursors.Put(p1, "audit", ports.FanoutCursor{Epoch: topicID(90), NextOffset: 1})
	e.cursors.Put(p0, "billing", ports.FanoutCursor{Epoch: topicID(80), NextOffset: 4}) // an older attach
	e.cursors.Put(p1, "ledger", ports.FanoutCursor{Epoch: topicID(70), NextOffset: 0})
	e.cursors.Corrupt(p1, "ledger")
	children := []ports.ChildEpoch{{Child: "audit", Epoch: topicID(90)}, {Child: "billing", Epoch: topicID(81)}, {Child: "ledger", Epoch: topicID(70)}}
	got := lagOf(t, r, "orders", "", []int32{1, 0}, children...)
	want := []ports.CursorLag{
		reportedAt(1, 1), {}, {}, // p1: audit; billing has no file; ledger's is corrupt
		reportedAt(1, 4), {}, {}, // p0: audit; billing's file is another epoch's; ledger has none
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

// ensure that partitions this node does not own (another node's, one not
// placed, one past the partition count) report nothing even with a file
// left behind, and that an absent topic or another incarnation refuses the
// whole request.
func TestLagOnlyOfOwnedPartitionsOfTheIncarnation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.propose(t, &meta.CreateTopic{Name: "orders", ID: topicID(1), Partitions: 3, VisibilityTimeoutMs: 30_000})
	for p, owner := range []string{self, other} { // p2 stays unplaced
		e.propose(t, &meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: topicID(1), Partition: int32(p), Owner: owner})
	}
	e.topic(t, "audit", 2, 1)
	r := fanout.NewLagReader(e.build(), e.logs)
	audit := ports.ChildEpoch{Child: "audit", Epoch: topicID(90)}
	for p := range int32(3) {
		e.cursors.Put(e.ref(t, "orders", p), "audit", ports.FanoutCursor{Epoch: topicID(90), NextOffset: 0})
	}
	got := lagOf(t, r, "orders", "", []int32{0, 1, 2, 3, -1}, audit)
	if want := []ports.CursorLag{reportedAt(0, 0), {}, {}, {}, {}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for name, ask := range map[string]func() error{
		"absent": func() error {
			_, err := r.FanoutLag(context.Background(), "nope", "", []int32{0}, []ports.ChildEpoch{audit})
			return err
		},
		"another_incarnation": func() error {
			_, err := r.FanoutLag(context.Background(), "orders", domain.TopicID(topicID(9)), []int32{0}, []ports.ChildEpoch{audit})
			return err
		},
	} {
		if err := ask(); !errors.Is(err, domain.ErrTopicNotFound) {
			t.Errorf("%s: %v, want ErrTopicNotFound", name, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.FanoutLag(ctx, "orders", "", []int32{0}, []ports.ChildEpoch{audit}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
