package topics_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// recordingLogs records every SetRetention call; while gate is set, calls
// wait for it to close.
type recordingLogs struct {
	*fake.PartitionLogs
	mu   sync.Mutex
	set  map[string]time.Duration
	gate chan struct{}
}

func (r *recordingLogs) SetRetention(topic string, id domain.TopicID, d time.Duration) {
	r.mu.Lock()
	gate := r.gate
	r.mu.Unlock()
	if gate != nil {
		<-gate
	}
	r.mu.Lock()
	r.set[topic+"/"+string(id)] = d
	r.mu.Unlock()
	r.PartitionLogs.SetRetention(topic, id, d)
}

func (r *recordingLogs) setGate(g chan struct{}) {
	r.mu.Lock()
	r.gate = g
	r.mu.Unlock()
}

// waitRetention polls until key has retention want, or fails at a deadline.
func (r *recordingLogs) waitRetention(t *testing.T, key string, want time.Duration) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.mu.Lock()
		got, ok := r.set[key]
		r.mu.Unlock()
		if ok && got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("retention of %s: %v (set %v), want %v", key, got, ok, want)
		}
		time.Sleep(time.Millisecond) // polling interval, not synchronisation
	}
}

// Ensure that retention reaches the partition logs for topics present at
// start, created later and altered later, and after a lagged watch
// (api.md §3.1 retention; brief: every node knows retention).
func TestRetentionSync(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	logs := &recordingLogs{PartitionLogs: f.logs, set: map[string]time.Duration{}}
	early := f.create(t, topics.CreateRequest{Caller: anyone, Name: "early"})
	w, err := topics.NewRetentionSync(f.meta, logs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	logs.waitRetention(t, "early/"+early.ID, 7*24*time.Hour)
	late := f.create(t, topics.CreateRequest{Caller: anyone, Name: "late", RetentionMs: ptr(int64(0))})
	logs.waitRetention(t, "late/"+late.ID, 0)
	f.alter(t, topics.AlterRequest{Caller: anyone, Name: "early", RetentionMs: ptr(int64(7_200_000))})
	logs.waitRetention(t, "early/"+early.ID, 2*time.Hour)

	// Lag: block the worker, bury an alter under more changes than its
	// buffer holds, release; the worker must start over and see the alter.
	gate := make(chan struct{})
	logs.setGate(gate)
	f.alter(t, topics.AlterRequest{Caller: anyone, Name: "late", RetentionMs: ptr(int64(3_600_000))})
	f.alter(t, topics.AlterRequest{Caller: anyone, Name: "early", RetentionMs: ptr(int64(10_800_000))})
	for i := 0; i < 300; i++ {
		f.propose(t, &meta.MemberHeartbeat{ID: self})
	}
	logs.setGate(nil)
	close(gate)
	logs.waitRetention(t, "early/"+early.ID, 3*time.Hour)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
}

// Ensure that the worker ends with the store's error when the store stops,
// and that NewRetentionSync rejects nil dependencies.
func TestRetentionSyncStops(t *testing.T) {
	t.Parallel()
	if _, err := topics.NewRetentionSync(nil, nil); err == nil {
		t.Fatal("nil dependencies accepted")
	}
	f := newFixture(t)
	w, err := topics.NewRetentionSync(f.meta, f.logs)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	f.meta.Close()
	select {
	case err := <-done:
		if !errors.Is(err, meta.ErrStopped) {
			t.Fatalf("run ended with %v, want the store's stop", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not end after the store stopped")
	}
}
