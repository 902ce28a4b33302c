package porttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// IngressWALFeatures says what the adapter under test supports.
type IngressWALFeatures struct {
	// Reopen: the storage outlives Close, and opening it again must keep every
	// acknowledged record, DurableNext and the checkpoint.
	Reopen bool
}

// IngressWALOpener opens the WAL under test on one storage: the first call
// on fresh storage, a later call (after Close) on the same storage again. It
// fails t when the open fails.
type IngressWALOpener func(t *testing.T) ports.IngressWAL

// ingressWALWait bounds every wait of the suite.
const ingressWALWait = 10 * time.Second

// IngressWAL runs the ports.IngressWAL conformance suite. newStorage returns,
// for one subtest, an opener bound to fresh storage.
func IngressWAL(t *testing.T, feat IngressWALFeatures, newStorage func(t *testing.T) IngressWALOpener) {
	open := func(t *testing.T) (ports.IngressWAL, IngressWALOpener) {
		opener := newStorage(t)
		w := opener(t)
		t.Cleanup(func() { _ = w.Close() })
		return w, opener
	}
	cases := []struct {
		name string
		run  func(t *testing.T, w ports.IngressWAL)
	}{
		{"dense_sequences_under_concurrent_appends", walDenseConcurrent},
		{"append_many_is_consecutive_and_not_interleaved", walAppendManyConsecutive},
		{"read_from_returns_byte_identical_records", walReadBack},
		{"read_from_respects_from_limit_and_durable_end", walReadBounds},
		{"slices_are_copied_both_ways", walSliceOwnership},
		{"checkpoint_rules", walCheckpointRules},
		{"durable_channel_wakes_on_advance", walDurableWakeUp},
		{"invalid_records_are_refused", walValidation},
		{"append_many_with_one_bad_record_appends_nothing", walAppendManyAtomicValidation},
		{"cancelled_context_before_staging_appends_nothing", walCancelledBeforeStaging},
		{"closed_wal_refuses_appends", walClosed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w, _ := open(t)
			c.run(t, w)
		})
	}
	if feat.Reopen {
		t.Run("reopen_keeps_records_and_checkpoint", func(t *testing.T) {
			t.Parallel()
			w, opener := open(t)
			walReopen(t, w, opener)
		})
	}
}

// sampleRecord returns a varied record: keyed and keyless, with and without
// a topic id, binary payloads of different sizes.
func sampleRecord(i int) domain.IngressRecord {
	rec := domain.IngressRecord{
		Topic:       fmt.Sprintf("topic-%d", i%3),
		Partition:   int32(i % 7),
		CreatedAtMs: 1_700_000_000_000 + int64(i),
		Payload:     make([]byte, 1+(i*37)%300),
	}
	for j := range rec.Payload {
		rec.Payload[j] = byte(i*31 + j) // every byte value, zeros included
	}
	if i%2 == 0 {
		rec.Key = []byte(fmt.Sprintf("key-%d\x00\xff", i))
	}
	if i%3 == 0 {
		rec.TopicID = domain.TopicID(fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15))
	}
	return rec
}

func sameRecord(a, b domain.IngressRecord) bool {
	return a.Topic == b.Topic && a.TopicID == b.TopicID && bytes.Equal(a.Key, b.Key) &&
		a.Partition == b.Partition && a.CreatedAtMs == b.CreatedAtMs && bytes.Equal(a.Payload, b.Payload)
}

func mustAppend(t *testing.T, w ports.IngressWAL, rec domain.IngressRecord) uint64 {
	t.Helper()
	seq, err := w.Append(context.Background(), rec)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	return seq
}

func mustReadAll(t *testing.T, w ports.IngressWAL, from uint64) []ports.WALEntry {
	t.Helper()
	got, err := w.ReadFrom(from, 1<<20)
	if err != nil {
		t.Fatalf("ReadFrom(%d): %v", from, err)
	}
	return got
}

// checkEntries fails t unless got holds exactly want, seq by seq from first.
func checkEntries(t *testing.T, got []ports.WALEntry, first uint64, want []domain.IngressRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d entries, want %d", len(got), len(want))
	}
	for i, e := range got {
		if e.Seq != first+uint64(i) {
			t.Fatalf("entry %d has seq %d, want %d", i, e.Seq, first+uint64(i))
		}
		if !sameRecord(e.Record, want[i]) {
			t.Fatalf("seq %d: read %+v, want %+v", e.Seq, e.Record, want[i])
		}
	}
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(ingressWALWait):
		t.Fatalf("%s: not closed within %v", what, ingressWALWait)
	}
}

// ensure that concurrent appenders get dense, unique sequences from 0 and
// every record reads back under the sequence its Append returned.
func walDenseConcurrent(t *testing.T, w ports.IngressWAL) {
	const workers, each = 8, 25
	var mu sync.Mutex
	bySeq := map[uint64]domain.IngressRecord{}
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for i := range each {
				rec := sampleRecord(g*each + i)
				seq, err := w.Append(context.Background(), rec)
				if err != nil {
					t.Errorf("Append: %v", err)
					return
				}
				mu.Lock()
				bySeq[seq] = rec
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(bySeq) != workers*each {
		t.Fatalf("%d distinct sequences, want %d", len(bySeq), workers*each)
	}
	want := make([]domain.IngressRecord, workers*each)
	for seq, rec := range bySeq {
		if seq >= uint64(len(want)) {
			t.Fatalf("sequence %d outside the dense range [0, %d)", seq, len(want))
		}
		want[seq] = rec
	}
	if got := w.DurableNext(); got != uint64(len(want)) {
		t.Fatalf("DurableNext = %d, want %d", got, len(want))
	}
	checkEntries(t, mustReadAll(t, w, 0), 0, want)
}

// ensure that each AppendMany batch occupies consecutive sequences even while
// single appends and other batches run concurrently.
func walAppendManyConsecutive(t *testing.T, w ports.IngressWAL) {
	const batches, size = 12, 5
	type placed struct {
		first uint64
		recs  []domain.IngressRecord
	}
	results := make(chan placed, batches)
	var wg sync.WaitGroup
	for b := range batches {
		wg.Go(func() {
			recs := make([]domain.IngressRecord, size)
			for i := range recs {
				recs[i] = sampleRecord(b*100 + i)
			}
			first, err := w.AppendMany(context.Background(), recs)
			if err != nil {
				t.Errorf("AppendMany: %v", err)
				return
			}
			results <- placed{first, recs}
		})
		wg.Go(func() {
			if _, err := w.Append(context.Background(), sampleRecord(b)); err != nil {
				t.Errorf("Append: %v", err)
			}
		})
	}
	wg.Wait()
	close(results)
	all := mustReadAll(t, w, 0)
	if len(all) != batches*(size+1) {
		t.Fatalf("read %d entries, want %d", len(all), batches*(size+1))
	}
	for p := range results {
		checkEntries(t, all[p.first:p.first+size], p.first, p.recs)
	}
}

// ensure that records read back byte-identical across formats 1 and 2, empty
// and binary keys, and payloads from one byte to 1 MiB.
func walReadBack(t *testing.T, w ports.IngressWAL) {
	want := []domain.IngressRecord{
		{Topic: "t", Payload: []byte{0}},
		{Topic: "orders", TopicID: "0123456789abcdef", Key: []byte{0, 1, 2, 255}, Partition: domain.PartitionMax,
			CreatedAtMs: 1<<63 - 1, Payload: bytes.Repeat([]byte{0xAB, 0x00}, 1<<19)},
		{Topic: "ünïcode/topic", Key: []byte("k"), Partition: 3, Payload: []byte("{\"json\":true}")},
	}
	for i := range 20 {
		want = append(want, sampleRecord(i))
	}
	for i, rec := range want {
		if seq := mustAppend(t, w, rec); seq != uint64(i) {
			t.Fatalf("Append %d returned seq %d", i, seq)
		}
	}
	checkEntries(t, mustReadAll(t, w, 0), 0, want)
}

// ensure that ReadFrom honours from and limit and never passes DurableNext.
func walReadBounds(t *testing.T, w ports.IngressWAL) {
	var want []domain.IngressRecord
	for i := range 10 {
		want = append(want, sampleRecord(i))
		mustAppend(t, w, want[i])
	}
	got, err := w.ReadFrom(4, 3)
	if err != nil {
		t.Fatalf("ReadFrom(4, 3): %v", err)
	}
	checkEntries(t, got, 4, want[4:7])
	checkEntries(t, mustReadAll(t, w, 7), 7, want[7:])
	for _, from := range []uint64{10, 11, 1 << 40} {
		if got := mustReadAll(t, w, from); len(got) != 0 {
			t.Fatalf("ReadFrom(%d) returned %d entries past the durable end", from, len(got))
		}
	}
	if got, err := w.ReadFrom(0, 0); err != nil || len(got) != 0 {
		t.Fatalf("ReadFrom(0, 0) = %d entries, %v; want none", len(got), err)
	}
}

// ensure that the WAL copies the caller's slices on Append and hands out
// slices the caller may change without affecting later reads.
func walSliceOwnership(t *testing.T, w ports.IngressWAL) {
	rec := domain.IngressRecord{Topic: "t", Key: []byte("key"), Payload: []byte("payload")}
	mustAppend(t, w, rec)
	rec.Key[0], rec.Payload[0] = 'X', 'X'
	first := mustReadAll(t, w, 0)
	want := domain.IngressRecord{Topic: "t", Key: []byte("key"), Payload: []byte("payload")}
	checkEntries(t, first, 0, []domain.IngressRecord{want})
	first[0].Record.Key[0], first[0].Record.Payload[0] = 'Y', 'Y'
	checkEntries(t, mustReadAll(t, w, 0), 0, []domain.IngressRecord{want})
}

// ensure that the checkpoint starts at 0, moves forward only, never passes
// DurableNext, and reads back what was stored.
func walCheckpointRules(t *testing.T, w ports.IngressWAL) {
	if got := w.Checkpoint(); got != 0 {
		t.Fatalf("fresh Checkpoint = %d, want 0", got)
	}
	for i := range 5 {
		mustAppend(t, w, sampleRecord(i))
	}
	if err := w.StoreCheckpoint(6); err == nil {
		t.Fatal("StoreCheckpoint past DurableNext succeeded")
	}
	for _, seq := range []uint64{0, 3, 3, 5} {
		if err := w.StoreCheckpoint(seq); err != nil {
			t.Fatalf("StoreCheckpoint(%d): %v", seq, err)
		}
		if got := w.Checkpoint(); got != seq {
			t.Fatalf("Checkpoint = %d after storing %d", got, seq)
		}
	}
	if err := w.StoreCheckpoint(4); err == nil {
		t.Fatal("StoreCheckpoint going backwards succeeded")
	}
	if got := w.Checkpoint(); got != 5 {
		t.Fatalf("Checkpoint = %d after a refused store, want 5", got)
	}
}

// ensure that a channel fetched from Durable closes when an append becomes
// durable, and that a fresh channel is handed out afterwards.
func walDurableWakeUp(t *testing.T, w ports.IngressWAL) {
	ch := w.Durable()
	select {
	case <-ch:
		t.Fatal("Durable channel closed before any append")
	default:
	}
	mustAppend(t, w, sampleRecord(1))
	waitClosed(t, ch, "Durable channel after an append")
	next := w.Durable()
	select {
	case <-next:
		t.Fatal("Durable channel fetched after the advance is already closed")
	default:
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := w.Append(context.Background(), sampleRecord(2)); err != nil {
			t.Errorf("Append: %v", err)
		}
	}()
	waitClosed(t, next, "second Durable channel")
	waitClosed(t, done, "second append")
}

// ensure that records no WAL may hold are refused with the domain sentinels
// and leave no trace.
func walValidation(t *testing.T, w ports.IngressWAL) {
	cases := []struct {
		name string
		rec  domain.IngressRecord
		want error
	}{
		{"empty_topic", domain.IngressRecord{Payload: []byte("p")}, domain.ErrInvalidRecord},
		{"empty_payload", domain.IngressRecord{Topic: "t"}, domain.ErrInvalidRecord},
		{"negative_partition", domain.IngressRecord{Topic: "t", Partition: -1, Payload: []byte("p")}, domain.ErrInvalidRecord},
		{"negative_time", domain.IngressRecord{Topic: "t", CreatedAtMs: -1, Payload: []byte("p")}, domain.ErrInvalidRecord},
		{"bad_topic_id", domain.IngressRecord{Topic: "t", TopicID: "0123456789ABCDEF", Payload: []byte("p")}, domain.ErrInvalidRecord},
		{"above_16_MiB", domain.IngressRecord{Topic: "t", Payload: make([]byte, 16<<20)}, domain.ErrRecordTooLarge},
	}
	for _, c := range cases {
		if _, err := w.Append(context.Background(), c.rec); !errors.Is(err, c.want) {
			t.Errorf("%s: Append error %v, want %v", c.name, err, c.want)
		}
		if _, err := w.AppendMany(context.Background(), []domain.IngressRecord{c.rec}); !errors.Is(err, c.want) {
			t.Errorf("%s: AppendMany error %v, want %v", c.name, err, c.want)
		}
	}
	if got := w.DurableNext(); got != 0 {
		t.Fatalf("DurableNext = %d after refused records, want 0", got)
	}
	if seq := mustAppend(t, w, sampleRecord(0)); seq != 0 {
		t.Fatalf("first accepted record got seq %d, want 0", seq)
	}
}

// ensure that AppendMany checks every record before staging any.
func walAppendManyAtomicValidation(t *testing.T, w ports.IngressWAL) {
	recs := []domain.IngressRecord{sampleRecord(0), sampleRecord(1), {Topic: "t"}}
	if _, err := w.AppendMany(context.Background(), recs); !errors.Is(err, domain.ErrInvalidRecord) {
		t.Fatalf("AppendMany error %v, want ErrInvalidRecord", err)
	}
	if got := w.DurableNext(); got != 0 {
		t.Fatalf("DurableNext = %d, want 0: part of a refused batch was appended", got)
	}
}

// ensure that a context cancelled before the call appends nothing.
func walCancelledBeforeStaging(t *testing.T, w ports.IngressWAL) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.Append(ctx, sampleRecord(0)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Append error %v, want context.Canceled", err)
	}
	if _, err := w.AppendMany(ctx, []domain.IngressRecord{sampleRecord(1)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("AppendMany error %v, want context.Canceled", err)
	}
	if got := w.DurableNext(); got != 0 {
		t.Fatalf("DurableNext = %d, want 0", got)
	}
}

// ensure that Close is idempotent, closes the Durable channel and makes later
// appends fail with domain.ErrClosed.
func walClosed(t *testing.T, w ports.IngressWAL) {
	mustAppend(t, w, sampleRecord(0))
	ch := w.Durable()
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	waitClosed(t, ch, "Durable channel at Close")
	if _, err := w.Append(context.Background(), sampleRecord(1)); !errors.Is(err, domain.ErrClosed) {
		t.Fatalf("Append after Close: %v, want ErrClosed", err)
	}
	if _, err := w.AppendMany(context.Background(), []domain.IngressRecord{sampleRecord(1)}); !errors.Is(err, domain.ErrClosed) {
		t.Fatalf("AppendMany after Close: %v, want ErrClosed", err)
	}
}

// ensure that reopening keeps every record, DurableNext and the checkpoint,
// and that appends continue at the next sequence.
func walReopen(t *testing.T, w ports.IngressWAL, opener IngressWALOpener) {
	var want []domain.IngressRecord
	for i := range 6 {
		want = append(want, sampleRecord(i))
	}
	if _, err := w.AppendMany(context.Background(), want[:4]); err != nil {
		t.Fatalf("AppendMany: %v", err)
	}
	mustAppend(t, w, want[4])
	mustAppend(t, w, want[5])
	if err := w.StoreCheckpoint(2); err != nil {
		t.Fatalf("StoreCheckpoint: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	again := opener(t)
	t.Cleanup(func() { _ = again.Close() })
	if got := again.DurableNext(); got != 6 {
		t.Fatalf("DurableNext after reopen = %d, want 6", got)
	}
	if got := again.Checkpoint(); got != 2 {
		t.Fatalf("Checkpoint after reopen = %d, want 2", got)
	}
	checkEntries(t, mustReadAll(t, again, 2), 2, want[2:])
	if seq := mustAppend(t, again, sampleRecord(9)); seq != 6 {
		t.Fatalf("first append after reopen got seq %d, want 6", seq)
	}
}
