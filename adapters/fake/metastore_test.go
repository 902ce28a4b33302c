package fake_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
	"github.com/narad/narad/ports/porttest"
)

// Ensure that the fake keeps the MetadataStore contract the real store keeps.
func TestMetaStoreConformance(t *testing.T) {
	t.Parallel()
	porttest.MetadataStore(t, func(t *testing.T) ports.MetadataStore {
		s := fake.NewMetaStore()
		t.Cleanup(s.Close)
		return s
	})
}

func createTopic(name string) meta.Envelope {
	return meta.Envelope{Actor: "test", AtMs: 1_700_000_000_000, Event: &meta.CreateTopic{
		Name: name, ID: "0000000000000001", Partitions: 3, VisibilityTimeoutMs: 30_000}}
}

// Ensure that HoldApply makes the replica lag: committed entries stay
// invisible, Barrier waits for them, and ReleaseApply makes them visible.
func TestMetaStoreApplyLag(t *testing.T) {
	t.Parallel()
	s := fake.NewMetaStore()
	defer s.Close()
	s.HoldApply()
	if _, err := s.Commit(createTopic("t")); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Topic("t"); ok || s.CaughtUp() {
		t.Fatal("held entry visible, or lagging replica reads caught up")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := s.Barrier(ctx); !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("Barrier while lagging = %v", err)
	}
	if err := s.ReleaseApply(); err != nil {
		t.Fatal(err)
	}
	if err := s.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Topic("t"); !ok || !s.CaughtUp() {
		t.Fatal("released entry not visible")
	}
}

// Ensure that the failure knobs fail what they name, and Close stops writes.
func TestMetaStoreKnobs(t *testing.T) {
	t.Parallel()
	s := fake.NewMetaStore()
	boom := errors.New("boom")
	s.FailBarrier(boom)
	if err := s.Barrier(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("Barrier = %v", err)
	}
	s.FailPropose(meta.ErrUnavailable)
	if _, err := s.Propose(context.Background(), createTopic("t")); !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("Propose = %v", err)
	}
	s.SetLeader(false)
	if s.IsLeader() || s.AddVoter(context.Background(), 2, "h:1") == nil {
		t.Fatal("follower changed membership")
	}
	s.SetLeader(true)
	if err := s.RemoveReplica(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	if err := s.AddVoter(context.Background(), 2, "h:1"); !errors.Is(err, meta.ErrRefused) {
		t.Fatalf("re-adding a removed replica = %v", err)
	}
	s.Close()
	if err := s.Barrier(context.Background()); !errors.Is(err, meta.ErrStopped) {
		t.Fatalf("Barrier after Close = %v", err)
	}
}
