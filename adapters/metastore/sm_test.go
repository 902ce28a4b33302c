package metastore

import (
	"bytes"
	"errors"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"

	sm "github.com/lni/dragonboat/v4/statemachine"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/domain/meta/metatest"
	"github.com/narad/narad/ports"
)

// smTarget runs golden scripts through the real Update path: encode, one
// pebble batch per script block, decode the results.
type smTarget struct{ s *stateMachine }

func (g smTarget) ApplyBatch(first uint64, envs []meta.Envelope) ([]meta.Result, error) {
	ents := make([]sm.Entry, 0, len(envs))
	for i, e := range envs {
		b, err := meta.Encode(e)
		if err != nil {
			return nil, err
		}
		ents = append(ents, sm.Entry{Index: first + uint64(i), Cmd: b})
	}
	out, err := g.s.Update(ents)
	if err != nil {
		return nil, err
	}
	results := make([]meta.Result, 0, len(out))
	for _, e := range out {
		applied, err := decodeResult(e.Result)
		if err != nil {
			return nil, err
		}
		results = append(results, applied.Result)
	}
	return results, nil
}

func (g smTarget) Reader() meta.KVReader { return kvReader{g.s.db} }

// Ensure that the pebble state machine gives exactly the outputs of the
// shared golden scripts (the same scripts the pure apply runs).
func TestGoldenPebble(t *testing.T) {
	metatest.Run(t, "../../domain/meta/testdata", func(t *testing.T) metatest.Target {
		s := openSM(t, t.TempDir())
		t.Cleanup(func() { s.Close() })
		return smTarget{s}
	})
}

// Ensure that an entry this build cannot apply stops Update with a clear,
// fatal error, writes nothing of its batch, and is met again after a
// restart (it is not counted applied).
func TestUpdateStopsOnEntryItCannotApply(t *testing.T) {
	good, err := meta.Encode(createTopic("before", 1))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		cmd  []byte
		want error
	}{
		{"newer_format_version", append([]byte{9}, good[1:]...), meta.ErrUnknownEventVersion},
		{"unknown_entry_type", append([]byte{1, 250}, good[2:]...), meta.ErrUnknownEntryType},
		{"corrupt_payload", []byte("\x01\x01{\"actor\":"), meta.ErrCorruptEvent},
		{"empty_command", nil, meta.ErrCorruptEvent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openSM(t, dir)
			if _, err := s.Update(entries(t, 1, createTopic("before", 1))); err != nil {
				t.Fatal(err)
			}
			batch := append(entries(t, 2, createTopic("same-batch", 2)), sm.Entry{Index: 3, Cmd: tc.cmd})
			_, err := s.Update(batch)
			if !errors.Is(err, ErrEntryNotApplicable) || !errors.Is(err, tc.want) {
				t.Fatalf("Update = %v, want ErrEntryNotApplicable wrapping %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), "index 3") {
				t.Fatalf("error does not name the entry: %v", err)
			}
			if got := s.applied.Load(); got != 1 {
				t.Fatalf("applied index %d after the failed batch, want 1", got)
			}
			s.Close()
			s = openSM(t, dir)
			defer s.Close()
			if s.applied.Load() != 1 || strings.Contains(describe(t, s), "same-batch") {
				t.Fatalf("restart shows applied %d and views:\n%s", s.applied.Load(), describe(t, s))
			}
		})
	}
}

// Story F26: an attach refused at its first apply must not succeed on one
// replica's replay after later entries changed the views. The applied index
// stored with every batch makes replay skip what the database holds.
func TestReplaySkipsAppliedEntries(t *testing.T) {
	dir := t.TempDir()
	log := entries(t, 1,
		createTopic("parent", 1),
		createTopic("child", 2),
		env(&meta.PutSchema{Topic: "child", Version: 1, Schema: []byte(`{"type":"object"}`)}),
		env(&meta.AttachChild{Parent: "parent", Child: "child", Epoch: topicID(9)}),
		env(&meta.PutSchema{Topic: "parent", Version: 1, Schema: []byte(`{"type":"object"}`)}),
	)
	s := openSM(t, dir)
	out, err := s.Update(log)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := decodeResult(out[3].Result); r.Result.Code != meta.CodeRefused {
		t.Fatalf("attach result %+v, want refused", r)
	}
	before := describe(t, s)
	s.Close()

	s = openSM(t, dir)
	defer s.Close()
	if s.applied.Load() != 5 {
		t.Fatalf("reopened at applied index %d, want 5", s.applied.Load())
	}
	if _, err := s.Update(log); err != nil { // a replay handing the whole log again
		t.Fatal(err)
	}
	if after := describe(t, s); after != before || strings.Contains(after, "parent=parent") {
		t.Fatalf("replay changed the views:\n%s\nwant\n%s", after, before)
	}
}

// snapshotOf streams s's state into a buffer.
func snapshotOf(t *testing.T, s *stateMachine) []byte {
	t.Helper()
	state, err := s.PrepareSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.SaveSnapshot(state, &buf, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func manyEntries(t *testing.T, n int) []sm.Entry {
	var envs []meta.Envelope
	for i := 0; i < n; i++ {
		envs = append(envs, createTopic("t"+strings.Repeat("x", i%7)+string(rune('a'+i%26)), i+1))
		envs = append(envs, env(&meta.AssignPartitionIfAbsent{Topic: "ta", TopicID: topicID(1), Partition: int32(i % 3), Owner: "n1"}))
	}
	return entries(t, 1, envs...)
}

// Ensure that views restored from a snapshot plus the log tail equal views
// from replaying the whole log, and that the restored replica resumes at
// the snapshot's index.
func TestSnapshotPlusTailEqualsFullReplay(t *testing.T) {
	log := manyEntries(t, 60)
	cut := 70
	a := openSM(t, t.TempDir())
	defer a.Close()
	if _, err := a.Update(log[:cut]); err != nil {
		t.Fatal(err)
	}
	snap := snapshotOf(t, a)

	b := openSM(t, t.TempDir())
	defer b.Close()
	if _, err := b.Update(entries(t, 1, createTopic("stale", 99))); err != nil {
		t.Fatal(err)
	}
	var restored []ports.MetaChange
	b.publish = func(cs []ports.MetaChange) { restored = append(restored, cs...) }
	if err := b.RecoverFromSnapshot(bytes.NewReader(snap), nil); err != nil {
		t.Fatal(err)
	}
	if len(restored) != 1 || !restored[0].Restored || restored[0].Index != uint64(cut) {
		t.Fatalf("watchers told %+v, want one Restored change at %d", restored, cut)
	}
	if b.applied.Load() != uint64(cut) {
		t.Fatalf("restored at %d, want %d", b.applied.Load(), cut)
	}
	if _, err := b.Update(log[cut:]); err != nil {
		t.Fatal(err)
	}
	full := openSM(t, t.TempDir())
	defer full.Close()
	if _, err := full.Update(log); err != nil {
		t.Fatal(err)
	}
	if got, want := describe(t, b), describe(t, full); got != want {
		t.Fatalf("snapshot + tail:\n%s\nfull replay:\n%s", got, want)
	}
	if !bytes.Equal(snapshotOf(t, b), snapshotOf(t, full)) {
		t.Fatal("snapshots of equal states differ (journal or applied index diverged)")
	}
}

// Ensure that a damaged snapshot is refused and leaves the live database
// untouched.
func TestCorruptSnapshotIsRefused(t *testing.T) {
	a := openSM(t, t.TempDir())
	defer a.Close()
	if _, err := a.Update(manyEntries(t, 5)); err != nil {
		t.Fatal(err)
	}
	snap := snapshotOf(t, a)
	b := openSM(t, t.TempDir())
	defer b.Close()
	if _, err := b.Update(entries(t, 1, createTopic("kept", 1))); err != nil {
		t.Fatal(err)
	}
	damaged := map[string][]byte{
		"flipped_byte": func() []byte { c := bytes.Clone(snap); c[len(c)/2] ^= 0xff; return c }(),
		"truncated":    snap[:len(snap)-7],
		"bad_magic":    append([]byte("XXXXXXXX"), snap[8:]...),
	}
	for name, d := range damaged {
		if err := b.RecoverFromSnapshot(bytes.NewReader(d), nil); !errors.Is(err, ErrCorruptSnapshot) {
			t.Fatalf("%s: Recover = %v", name, err)
		}
		if !strings.Contains(describe(t, b), "topic kept") || b.applied.Load() != 1 {
			t.Fatalf("%s: live state changed", name)
		}
	}
}

// Story F50: a snapshot streams from the database; its allocation must not
// grow with the database (v3.0.1 held the whole database in memory). The
// bound is the spec's 100 KiB, checked on 10,000 topics.
func TestSnapshotAllocationIsBounded(t *testing.T) {
	s := openSM(t, t.TempDir())
	defer s.Close()
	for i := 0; i < 10_000; i += 500 {
		var envs []meta.Envelope
		for j := i; j < i+500; j++ {
			envs = append(envs, createTopic("topic-"+strconv.Itoa(j), j+1))
		}
		if _, err := s.Update(entries(t, uint64(i+1), envs...)); err != nil {
			t.Fatal(err)
		}
	}
	best := uint64(math.MaxUint64)
	for run := 0; run < 10; run++ { // the least of ten runs: background pebble work allocates too
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		state, err := s.PrepareSnapshot()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SaveSnapshot(state, io.Discard, nil); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		best = min(best, after.TotalAlloc-before.TotalAlloc)
	}
	if best > 100<<10 {
		t.Fatalf("a snapshot of 10,000 topics allocated %d bytes, above 100 KiB", best)
	}
}
