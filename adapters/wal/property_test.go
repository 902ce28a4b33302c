package wal

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// randomRecord draws a record with random binary key and payload.
func randomRecord(r *rand.Rand) domain.IngressRecord {
	rec := domain.IngressRecord{
		Topic:       fmt.Sprintf("t%d", r.IntN(5)),
		Partition:   r.Int32N(1 << 20),
		CreatedAtMs: r.Int64N(1 << 50),
		Payload:     make([]byte, 1+r.IntN(600)),
	}
	for i := range rec.Payload {
		rec.Payload[i] = byte(r.Uint32())
	}
	if r.IntN(2) == 0 {
		rec.Key = make([]byte, 1+r.IntN(20))
		for i := range rec.Key {
			rec.Key[i] = byte(r.Uint32())
		}
	}
	if r.IntN(2) == 0 {
		rec.TopicID = domain.TopicID(fmt.Sprintf("%016x", r.Uint64()))
	}
	return rec
}

// crashLedger records what the workload submitted and what was acked before
// the crash image was taken.
type crashLedger struct {
	mu        sync.Mutex
	submitted map[uint64]domain.IngressRecord // every sequence any append returned
	acked     map[uint64]bool                 // acked before the crash image
}

func (l *crashLedger) add(first uint64, recs []domain.IngressRecord, beforeCrash bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, rec := range recs {
		l.submitted[first+uint64(i)] = rec
		if beforeCrash {
			l.acked[first+uint64(i)] = true
		}
	}
}

// crashPoint is a vfs hook taking a crash image of mem just before the n-th
// segment write, fsync or create (all issued by the sync loop alone), so the
// image may hold written-but-unsynced bytes, of which Crash keeps a random
// prefix.
type crashPoint struct {
	mem     *vfs.MemFS
	rand    *rand.Rand
	at      int64
	ops     atomic.Int64
	crashed atomic.Bool
	image   *vfs.MemFS
}

func (c *crashPoint) hook(op vfs.Op, name string) error {
	if filepath.Ext(name) != segmentFileSuffix || (op != vfs.OpWrite && op != vfs.OpSync && op != vfs.OpCreate) {
		return nil
	}
	if c.ops.Add(1) == c.at {
		c.image = c.mem.Crash(vfs.CrashOptions{Rand: c.rand})
		c.crashed.Store(true)
	}
	return nil
}

// ensure that a machine crash at a random point of a random concurrent
// workload (single appends, batches, rolls, checkpoints, compaction) leaves
// an image that opens, holds every record acked before the crash byte for
// byte, and holds nothing but a dense prefix of what was staged.
func TestCrashProperty(t *testing.T) {
	seeds := 30
	if testing.Short() {
		seeds = 8
	}
	for _, prealloc := range []bool{false, true} {
		for seed := range uint64(seeds) {
			t.Run(fmt.Sprintf("prealloc_%v/seed_%d", prealloc, seed), func(t *testing.T) { crashRun(t, seed, prealloc) })
		}
	}
}

func crashRun(t *testing.T, seed uint64, prealloc bool) {
	r := rand.New(rand.NewPCG(seed, 1))
	mem := vfs.NewMem()
	cp := &crashPoint{mem: mem, rand: rand.New(rand.NewPCG(seed, 2)), at: 1 + r.Int64N(150)}
	opts := Options{SegmentSizeMaxBytes: int64(512 + r.IntN(8192)), CheckpointFlushInterval: time.Millisecond, Prealloc: prealloc}
	w := openMem(t, vfs.Inject(mem, cp.hook), opts)
	ledger := &crashLedger{submitted: map[uint64]domain.IngressRecord{}, acked: map[uint64]bool{}}
	var wg sync.WaitGroup
	for g := range 4 {
		wr := rand.New(rand.NewPCG(seed, uint64(10+g)))
		wg.Go(func() { crashWorkload(t, w, wr, ledger, cp) })
	}
	appended := make(chan struct{})
	go func() { wg.Wait(); close(appended) }()
	checkpointWorkload(t, w, rand.New(rand.NewPCG(seed, 3)), appended)
	<-appended
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if cp.image == nil {
		cp.image = mem.Crash(vfs.CrashOptions{Rand: cp.rand})
	}
	t.Logf("crash at op %d of %d, acked %d of %d, spares made %d", cp.at, cp.ops.Load(), len(ledger.acked), len(ledger.submitted), w.prep.made.Load())
	checkCrashImage(t, cp.image, opts, ledger)
}

// crashWorkload appends random single records and batches.
func crashWorkload(t *testing.T, w *WAL, r *rand.Rand, l *crashLedger, cp *crashPoint) {
	for range 25 {
		recs := []domain.IngressRecord{randomRecord(r)}
		for r.IntN(3) == 0 && len(recs) < 6 {
			recs = append(recs, randomRecord(r))
		}
		var first uint64
		var err error
		if len(recs) == 1 && r.IntN(2) == 0 {
			first, err = w.Append(context.Background(), recs[0])
		} else {
			first, err = w.AppendMany(context.Background(), recs)
		}
		if err != nil {
			t.Errorf("append: %v", err)
			return
		}
		l.add(first, recs, !cp.crashed.Load())
	}
}

// checkpointWorkload moves the checkpoint forward now and then and flushes,
// so compaction runs during the workload.
func checkpointWorkload(t *testing.T, w *WAL, r *rand.Rand, appended <-chan struct{}) {
	for range 10 {
		select {
		case <-w.Durable():
		case <-appended:
			return
		}
		next := w.DurableNext()
		target := next - uint64(r.IntN(int(min(next, 8))+1))
		if target < w.Checkpoint() {
			continue
		}
		if err := w.StoreCheckpoint(target); err != nil {
			t.Errorf("StoreCheckpoint(%d): %v", target, err)
			return
		}
		if r.IntN(2) == 0 {
			if err := w.FlushCheckpoint(); err != nil {
				t.Errorf("FlushCheckpoint: %v", err)
				return
			}
		}
	}
}

// checkCrashImage opens the image and checks it against the ledger.
func checkCrashImage(t *testing.T, img *vfs.MemFS, opts Options, l *crashLedger) {
	t.Helper()
	w := openMem(t, img, opts)
	cpv, next := w.Checkpoint(), w.DurableNext()
	got := readAll(t, w, cpv)
	if uint64(len(got)) != next-cpv {
		t.Fatalf("read %d entries from checkpoint %d, DurableNext %d", len(got), cpv, next)
	}
	for i, e := range got {
		want, ok := l.submitted[e.Seq]
		if e.Seq != cpv+uint64(i) || !ok || !sameRecord(e.Record, want) {
			t.Fatalf("seq %d (entry %d from %d): not the record staged under it (staged: %v)", e.Seq, i, cpv, ok)
		}
	}
	for seq := range l.acked {
		if seq >= next {
			t.Fatalf("acked seq %d lost: image ends at %d", seq, next)
		}
	}
	if next > uint64(len(l.submitted)) {
		t.Fatalf("image holds %d sequences, only %d were staged", next, len(l.submitted))
	}
}
