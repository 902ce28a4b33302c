package shipping_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/domain/remote"
)

// records makes n keyed JSON records from offset from: key k<i%keys>,
// payload {"n":<offset>}.
func records(from int64, n, keys int) []domain.Record {
	out := make([]domain.Record, n)
	for i := range n {
		off := from + int64(i)
		out[i] = domain.Record{Offset: off, Key: []byte(fmt.Sprintf("k%d", i%keys)), Payload: []byte(fmt.Sprintf(`{"n":%d}`, off))}
	}
	return out
}

func ship(t *testing.T, f *fixture, recs []domain.Record) {
	t.Helper()
	ctx := context.Background()
	if err := f.shipper.Ready(ctx, f.cursor); err != nil {
		t.Fatalf("ready: %v", err)
	}
	if err := f.shipper.Ship(ctx, f.cursor, recs); err != nil {
		t.Fatalf("ship: %v", err)
	}
}

// Every record of a slab reaches the target once, a key's records in
// parent order, in requests of at most 1,000 after the probe learned the
// target takes them (internals.md §7.2).
func TestShipKeepsEachKeysOrderAcrossLanes(t *testing.T) {
	f := newFixture(t, 4, 64<<20)
	recs := records(0, 2000, 37)
	ship(t, f, recs)
	got := f.target.all()
	if len(got) != len(recs) {
		t.Fatalf("target holds %d records, want %d", len(got), len(recs))
	}
	last := map[string]int{}
	for _, s := range got {
		var n int
		fmt.Sscanf(s.payload, `{"n":%d}`, &n)
		if prev, ok := last[s.key]; ok && n <= prev {
			t.Fatalf("key %s: %d after %d", s.key, n, prev)
		}
		last[s.key] = n
	}
	for _, b := range f.target.batches {
		if b > remote.ChunkMaxMessagesCapable {
			t.Fatalf("a batch of %d messages", b)
		}
	}
	if st := f.state(t); st.State != "running" || st.LastOKMs == 0 || st.LastCheckMs == 0 {
		t.Fatalf("status %+v", st)
	}
	if rs := f.shipper.Remotes(); len(rs) != 1 || rs[0].Remote != "dr" || rs[0].GateBackoff != 0 || rs[0].ChunkBytesCap != remote.ChunkStartBytes {
		t.Fatalf("remotes %+v", rs)
	}
	if f.metrics.get("requests timed") == 0 || f.metrics.get("slot waits") == 0 {
		t.Fatal("requests were not timed")
	}
}

// A 100-message target gets requests of 100.
func TestShipToALegacyTarget(t *testing.T) {
	f := newFixture(t, 1, 64<<20)
	f.target.script = func(msgs []message) (int, string) {
		if len(msgs) > 100 {
			return 400, `{"error":"too many messages: 101 (max 100)"}`
		}
		return 0, ""
	}
	ship(t, f, records(0, 250, 5))
	if len(f.target.all()) != 250 || len(f.target.batches) != 3 {
		t.Fatalf("stored %d in batches %v", len(f.target.all()), f.target.batches)
	}
}

// Unavailable answers are retried; what they carried counts as resent and
// nothing is lost.
func TestShipRetriesUnavailable(t *testing.T) {
	f := newFixture(t, 1, 64<<20)
	fails := 2
	f.target.script = func([]message) (int, string) {
		if fails > 0 {
			fails--
			return 503, "<html>bad gateway</html>"
		}
		return 0, ""
	}
	ship(t, f, records(0, 10, 3))
	if len(f.target.all()) != 10 || f.metrics.get("resent") != 20 || f.metrics.get("request 503") != 2 {
		t.Fatalf("stored %d resent %d", len(f.target.all()), f.metrics.get("resent"))
	}
}

// A record the target refuses for good: the ones before it go, it is
// retried once as base64, then the lane blocks on it in rejected_record
// until an admin skips it; the records after it go then (internals.md
// §7.3, api.md §2.12.1).
func TestShipBlocksOnARefusedRecordUntilSkipped(t *testing.T) {
	f := newFixture(t, 1, 64<<20)
	recs := records(0, 10, 1)
	recs[4].Payload = []byte(`{"poison":true}`)
	f.target.script = func(msgs []message) (int, string) {
		for i, m := range msgs {
			if strings.Contains(m.decoded().payload, "poison") {
				return 400, fmt.Sprintf(`{"error":"message %d: invalid argument: schema: poison"}`, i)
			}
		}
		return 0, ""
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.shipper.Ship(ctx, f.cursor, recs) }()
	waitFor(t, func() bool { st := f.state(t); return st.State == "rejected_record" && st.BlockedAt == 4 })
	if n := len(f.target.all()); n != 4 {
		t.Fatalf("%d stored before the refused record, want 4", n)
	}
	f.propose(t, &meta.SetRemoteChildState{Parent: "orders", Child: "orders-dr", ChildID: stubID, Op: meta.RemoteOpSkip, Partition: 0, Offset: 4})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(f.target.all()); n != 9 || f.metrics.get("skipped") != 1 {
		t.Fatalf("stored %d skipped %d", n, f.metrics.get("skipped"))
	}
	if st := f.state(t); st.BlockedAt != -1 {
		t.Fatalf("still blocked: %+v", st)
	}
}

// With compression on, a target that refuses a compressed chunk gets it
// again uncompressed at once, and compression stays off until the next
// check (internals.md §7.2 "Compression").
func TestShipFallsBackFromCompression(t *testing.T) {
	f := newFixture(t, 1, 64<<20)
	zstd := "zstd"
	if _, err := f.svc.Update(context.Background(), admin, "dr", remotes.UpdateRequest{Limits: remotes.LimitsPatch{Compression: &zstd}}); err != nil {
		t.Fatal(err)
	}
	ship(t, f, records(0, 10, 2))
	if f.target.zstdSeen == 0 || len(f.target.all()) != 10 {
		t.Fatalf("compressed batches %d, stored %d", f.target.zstdSeen, len(f.target.all()))
	}
	f.target.refuseZstd, f.target.zstdSeen = true, 0
	ship(t, f, records(10, 10, 2))
	ship(t, f, records(20, 10, 2))
	if f.target.zstdSeen != 1 || len(f.target.all()) != 30 {
		t.Fatalf("compressed batches after the refusal %d, stored %d", f.target.zstdSeen, len(f.target.all()))
	}
}

// A refusal that names no record is narrowed down by halving the chunk
// until the refused record goes alone; the lane then blocks on it, with
// every record before it on the target (internals.md §7.3 "bisect").
func TestShipBisectsToTheRefusedRecord(t *testing.T) {
	f := newFixture(t, 1, 64<<20)
	recs := records(0, 16, 1)
	recs[11].Payload = []byte(`{"poison":true}`)
	f.target.script = func(msgs []message) (int, string) {
		for _, m := range msgs {
			if strings.Contains(m.decoded().payload, "poison") {
				return 400, `{"error":"invalid argument: refused"}`
			}
		}
		return 0, ""
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.shipper.Ship(ctx, f.cursor, recs) }()
	waitFor(t, func() bool { st := f.state(t); return st.State == "rejected_record" && st.BlockedAt == 11 })
	if n := len(f.target.all()); n != 11 {
		t.Fatalf("%d stored before the refused record, want 11", n)
	}
	cancel()
	<-done
}

// A bare 404 from the batch route of a target whose listing answers is a
// target without batch produce: the link stalls in no_batch_produce.
func TestShipStallsOnATargetWithoutBatchProduce(t *testing.T) {
	f := newFixture(t, 1, 64<<20)
	f.target.script = func([]message) (int, string) { return 404, "404 page not found" }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.shipper.Ship(ctx, f.cursor, records(0, 3, 1)) }()
	waitFor(t, func() bool { return f.state(t).State == "no_batch_produce" })
	cancel()
	<-done
	if len(f.target.all()) != 0 {
		t.Fatal("records stored on a target that refused them")
	}
}
