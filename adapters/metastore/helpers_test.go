package metastore

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	sm "github.com/lni/dragonboat/v4/statemachine"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/loopbackport"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// testLogger is silent unless NARAD_TEST_LOG is set: dragonboat logs from
// its own goroutines, which may outlive a test's t.Log.
func testLogger() *zap.Logger {
	if os.Getenv("NARAD_TEST_LOG") != "" {
		l, _ := zap.NewDevelopment(zap.AddStacktrace(zap.DPanicLevel))
		return l
	}
	return zap.NewNop()
}

// openSM opens a bare state machine in dir (no Raft).
func openSM(t *testing.T, dir string) *stateMachine {
	t.Helper()
	s := newStateMachine(newDBFiles(dir, testLogger()), testLogger(), meta.JournalKeep, nil)
	if _, err := s.Open(nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// entries encodes envs as Raft entries first, first+1, ...
func entries(t testing.TB, first uint64, envs ...meta.Envelope) []sm.Entry {
	t.Helper()
	out := make([]sm.Entry, 0, len(envs))
	for i, env := range envs {
		b, err := meta.Encode(env)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sm.Entry{Index: first + uint64(i), Cmd: b})
	}
	return out
}

func describe(t testing.TB, s *stateMachine) string {
	t.Helper()
	var out string
	err := s.read(func(r meta.KVReader) error {
		var err error
		out, err = meta.Describe(r)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func env(ev meta.Event) meta.Envelope {
	return meta.Envelope{Actor: "test", AtMs: 1_700_000_000_000, Event: ev}
}

func topicID(n int) string { return fmt.Sprintf("%016x", n) }

func createTopic(name string, n int) meta.Envelope {
	return env(&meta.CreateTopic{Name: name, ID: topicID(n), Partitions: 3, VisibilityTimeoutMs: 30_000})
}

// freeAddr returns a loopback address below the ephemeral range, free a
// moment ago and given to no other test of this process, so a node
// restarted on it finds it unbound.
func freeAddr(t *testing.T) string { return loopbackport.Addr(t) }

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond every 10 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func mustPropose(t *testing.T, s ports.MetadataProposer, e meta.Envelope) ports.MetaApplied {
	t.Helper()
	got, err := s.Propose(ctxFor(t, 10*time.Second), e)
	if err != nil {
		t.Fatalf("propose %s %s: %v", e.Event.Type(), e.Event.Subject(), err)
	}
	return got
}
