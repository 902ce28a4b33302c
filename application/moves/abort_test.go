package moves_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/moves"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

func commit(t *testing.T, s *fake.MetaStore, evs ...meta.Event) {
	t.Helper()
	for _, ev := range evs {
		if _, err := s.Commit(meta.Envelope{AtMs: 1_700_000_000_000, Event: ev}); err != nil {
			t.Fatal(err)
		}
	}
}

// Ensure that an abort (api.md §2.17, conformance 235) clears the target
// of a move in flight and leaves the owner, answers a partition without a
// move 409 (domain.ErrNoMove), another target 409, an unplaced partition
// 404 (domain.ErrNoAssignment), and returns the move as it stood.
func TestAbortClearsTheTargetOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := fake.NewMetaStore()
	const id = "00000000000000a1"
	commit(t, s,
		&meta.CreateTopic{Name: "t", ID: id, Partitions: 2, VisibilityTimeoutMs: 30_000},
		&meta.AssignPartitionIfAbsent{Topic: "t", TopicID: id, Partition: 0, Owner: "n1"},
		&meta.AssignPartitionIfAbsent{Topic: "t", TopicID: id, Partition: 1, Owner: "n1"},
		&meta.SetAssignmentTarget{Topic: "t", TopicID: id, Partition: 1, Target: "n2"},
	)
	a := moves.NewAborter(s, fixedClock(time.UnixMilli(1_700_000_000_000)))
	for _, c := range []struct {
		topic     string
		partition int32
		target    string
		want      error
	}{
		{"t", 0, "", domain.ErrNoMove},
		{"t", 1, "n3", domain.ErrNoMove},
		{"missing", 0, "", domain.ErrNoAssignment},
		{"t", 5, "", domain.ErrNoAssignment},
	} {
		if _, err := a.Abort(ctx, "admin", c.topic, c.partition, c.target); !errors.Is(err, c.want) {
			t.Fatalf("abort %s/%d target %q: %v, want %v", c.topic, c.partition, c.target, err, c.want)
		}
	}
	mv, err := a.Abort(ctx, "admin", "t", 1, "n2")
	if err != nil || mv.From != "n1" || mv.To != "n2" || mv.Partition != 1 || mv.Topic != "t" {
		t.Fatalf("abort t/1: %+v, %v", mv, err)
	}
	row, _, _ := s.Assignment("t", 1)
	if row.Owner != "n1" || row.Target != "" {
		t.Fatalf("after the abort: %+v", row)
	}
	if _, err := a.Abort(ctx, "admin", "t", 1, ""); !errors.Is(err, domain.ErrNoMove) {
		t.Fatalf("second abort: %v", err)
	}
	s.FailPropose(meta.ErrUnavailable)
	commit(t, s, &meta.SetAssignmentTarget{Topic: "t", TopicID: id, Partition: 0, Target: "n2"})
	if _, err := a.Abort(ctx, "admin", "t", 0, ""); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("abort without a leader: %v", err)
	}
}
