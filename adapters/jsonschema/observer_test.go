package jsonschema_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/jsonschema"
)

// countingObserver counts what the validator reports.
type countingObserver struct {
	mu                sync.Mutex
	running, maxSeen  int
	started, finished int
	rejected          map[string]int
}

func (o *countingObserver) ValidationStarted() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.started++
	o.running++
	o.maxSeen = max(o.maxSeen, o.running)
}

func (o *countingObserver) ValidationFinished(took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.finished++
	o.running--
}

func (o *countingObserver) Rejected(reason string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.rejected[reason]++
}

// Ensure that every refusal is reported once under its reason (depth,
// malformed, invalid, busy, canceled), that only validations that took a
// slot are timed, and that starts and finishes pair up (api.md §7
// narad_schema_* series).
func TestObserverReasons(t *testing.T) {
	t.Parallel()
	obs := &countingObserver{rejected: map[string]int{}}
	v := jsonschema.New(jsonschema.Options{Slots: 1, SlotWait: 20 * time.Millisecond, Observer: obs})
	ctx := context.Background()
	integer := []byte(`{"type":"integer"}`)
	_ = v.Validate(ctx, "k", integer, []byte(`7`))         // accepted
	_ = v.Validate(ctx, "k", integer, []byte(`"seven"`))   // invalid
	_ = v.Validate(ctx, "k", integer, []byte(`{"a":`))     // malformed
	_ = v.Validate(ctx, "k", integer, []byte("\xff"))      // malformed
	_ = v.Validate(ctx, "k", integer, []byte(nested(257))) // depth
	_ = v.Check([]byte(`{"type":123}`))                    // invalid
	_ = v.Check([]byte("{" + nested(70) + "}"))            // depth
	_ = v.Check([]byte(`{"a":`))                           // malformed
	release := v.HoldSlotForTest()
	_ = v.Validate(ctx, "k", integer, []byte(`7`)) // busy
	ended, cancel := context.WithCancel(ctx)
	cancel()
	_ = v.Validate(ended, "k", integer, []byte(`7`)) // canceled
	release()
	want := map[string]int{"invalid": 2, "malformed": 3, "depth": 2, "busy": 1, "canceled": 1}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	for reason, n := range want {
		if obs.rejected[reason] != n {
			t.Errorf("%s: %d, want %d (all: %v)", reason, obs.rejected[reason], n, obs.rejected)
		}
	}
	if len(obs.rejected) != len(want) {
		t.Errorf("reasons %v, want exactly %v", obs.rejected, want)
	}
	if obs.started != 2 || obs.finished != 2 || obs.running != 0 || obs.maxSeen != 1 {
		t.Errorf("started %d finished %d running %d max %d; want 2, 2, 0, 1", obs.started, obs.finished, obs.running, obs.maxSeen)
	}
}
