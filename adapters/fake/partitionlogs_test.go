package fake_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
	"github.com/narad/narad/ports/porttest"
)

// ensure that the fake keeps the PartitionLogs contract the real store keeps.
func TestPartitionLogsConformance(t *testing.T) {
	porttest.PartitionLogs(t, func(t *testing.T) ports.PartitionLogs { return fake.NewPartitionLogs() },
		porttest.PartitionLogsFeatures{
			Reopen: func(t *testing.T, pl ports.PartitionLogs) ports.PartitionLogs {
				f := pl.(*fake.PartitionLogs)
				_ = f.Close()
				return f.Restart()
			},
			AgeOut: func(t *testing.T, pl ports.PartitionLogs, d time.Duration) { pl.(*fake.PartitionLogs).Advance(d) },
		})
}

// ensure that FailNextCommit fails exactly one commit, stores nothing, and the
// retry lands at the same offsets.
func TestPartitionLogsFailNextCommit(t *testing.T) {
	f := fake.NewPartitionLogs()
	ref := domain.PartitionRef{Topic: "t", Partition: 0}
	recs := []domain.Record{{Payload: []byte("a")}, {Payload: []byte("b")}}
	if _, err := f.CommitDurable(context.Background(), ref, recs); err != nil {
		t.Fatal(err)
	}
	f.FailNextCommit(nil)
	if _, err := f.CommitDurable(context.Background(), ref, recs); !errors.Is(err, fake.ErrFakeCommitFailure) {
		t.Fatalf("armed commit: %v", err)
	}
	if b, _ := f.Bounds(ref); b.HighWatermark != 2 {
		t.Fatalf("failed commit stored records: %+v", b)
	}
	if first, err := f.CommitDurable(context.Background(), ref, recs); err != nil || first != 2 {
		t.Fatalf("retry at %d, %v; want 2", first, err)
	}
}
