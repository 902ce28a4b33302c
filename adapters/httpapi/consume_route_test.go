package httpapi

import (
	"net/http"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// routedFixture is a consume fixture whose topic "t" has partition 0 here
// and partition 1 on node-2, reached through a fake forwarder.
func routedFixture(t *testing.T) (*consumeFixture, *fake.PeerForwarder) {
	t.Helper()
	fwd := fake.NewPeerForwarder()
	f := newConsumeFixtureWith(t, 10*time.Second, consume.Options{}, fwd)
	for _, id := range []string{consumeSelf, "node-2"} {
		f.propose(&meta.MemberJoin{ID: id, Addr: id + ":8080", ClusterAddr: id + ":9090"})
	}
	f.propose(&meta.CreateTopic{Name: "t", ID: "00000000000000aa", Partitions: 2, VisibilityTimeoutMs: 30_000, MaxInFlight: 1024, MaxAckedAhead: 1024})
	f.propose(&meta.AssignPartitionIfAbsent{Topic: "t", TopicID: "00000000000000aa", Partition: 0, Owner: consumeSelf})
	f.propose(&meta.AssignPartitionIfAbsent{Topic: "t", TopicID: "00000000000000aa", Partition: 1, Owner: "node-2"})
	return f, fwd
}

// wantPlain asserts a plain-text answer (api.md §3.3).
func wantPlain(t *testing.T, rec interface {
	Result() *http.Response
}, status int, body string) {
	t.Helper()
	res := rec.Result()
	defer res.Body.Close()
	buf := make([]byte, 512)
	n, _ := res.Body.Read(buf)
	if res.StatusCode != status || string(buf[:n]) != body+"\n" || res.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("got %d %q (%s), want %d plain %q", res.StatusCode, buf[:n], res.Header.Get("Content-Type"), status, body)
	}
}

// api-conformance 225, story F12: pinned consume, replay, ack, extend and
// nack on a dead owner's partition answer 503 plain text with
// Retry-After: 1.
func TestDeadOwnerIs503WithRetryAfter(t *testing.T) {
	t.Parallel()
	f, _ := routedFixture(t)
	f.propose(&meta.MemberDead{ID: "node-2"})
	for _, rec := range []interface {
		Result() *http.Response
	}{
		f.get("/v1/topics/t/consume?partition=1"),
		f.get("/v1/topics/t/consume?partition=1&offset=0"),
		f.ack("t", "1:0:5", ""),
		f.ack("t", "1:0:5", "&extend=true"),
		f.ack("t", "1:0:5", "&extend=0"),
	} {
		if got := rec.Result().Header.Get("Retry-After"); got != "1" {
			t.Fatalf("Retry-After %q, want 1", got)
		}
		wantPlain(t, rec, http.StatusServiceUnavailable, "partition owner is down; retry later")
	}
}

// api.md §2.15, §3.3: an ack forward that got no answer is 502 plain text
// saying the ack may have been applied; a consume forward is 502 too.
func TestForwardWithoutAnswerIs502(t *testing.T) {
	t.Parallel()
	f, fwd := routedFixture(t)
	fwd.FailNext(nil)
	wantPlain(t, f.ack("t", "1:0:5", ""), http.StatusBadGateway, "the partition owner did not answer; the ack may have been applied; retry")
	fwd.FailNext(nil)
	if rec := f.get("/v1/topics/t/consume?partition=1"); rec.Code != http.StatusBadGateway {
		t.Fatalf("consume forward: %d %q", rec.Code, rec.Body.String())
	}
}

// api.md §2.15, §3.3: an ack, extend or nack whose forward never left
// this node is 503 plain text saying nothing was applied, with
// Retry-After: 1; a 502 carries no Retry-After; in a batch ack the handle's
// entry is 503 with the same message.
func TestAckForwardNotSentIs503(t *testing.T) {
	t.Parallel()
	f, fwd := routedFixture(t)
	const msg = "the ack did not reach the partition owner and was not applied; retry"
	for _, extend := range []string{"", "&extend=true", "&extend=0"} {
		fwd.FailNext(fake.ErrFakePeerNotSent)
		rec := f.ack("t", "1:0:5", extend)
		if got := rec.Result().Header.Get("Retry-After"); got != "1" {
			t.Fatalf("%q: Retry-After %q, want 1", extend, got)
		}
		wantPlain(t, rec, http.StatusServiceUnavailable, msg)
	}
	fwd.FailNext(nil)
	if rec := f.ack("t", "1:0:5", ""); rec.Code != http.StatusBadGateway || rec.Result().Header.Get("Retry-After") != "" {
		t.Fatalf("no answer: %d, Retry-After %q", rec.Code, rec.Result().Header.Get("Retry-After"))
	}
	fwd.FailNext(fake.ErrFakePeerNotSent)
	rec := f.batchAck("t", "", handlesBody("1:0:1", "0:0:1"))
	want := `{"results":[{"status":503,"error":"` + msg + `"},{"status":410,"error":"receipt handle no longer matches an active reservation"}]}` + "\n"
	if rec.Code != http.StatusOK || rec.Body.String() != want {
		t.Fatalf("got %d %s", rec.Code, rec.Body.String())
	}
}

// api.md §2.14, §2.15: a live owner's partition is served through the
// forward (no 421).
func TestPinnedConsumeAndAckAreForwarded(t *testing.T) {
	t.Parallel()
	f, fwd := routedFixture(t)
	fwd.Offer("node-2", domain.Delivery{Topic: "t", Partition: 1, Record: domain.Record{Offset: 3, Payload: []byte(`{"a":1}`)},
		Handle: &domain.ReceiptHandle{Partition: 1, Offset: 3, Nonce: 11}})
	env := envelopeOf(t, f.get("/v1/topics/t/consume?partition=1"))
	if env.Offset != 3 || env.ReceiptHandle == nil || *env.ReceiptHandle != "1:3:11" {
		t.Fatalf("envelope %+v", env)
	}
	if rec := f.ack("t", "1:3:11", ""); rec.Code != http.StatusNoContent {
		t.Fatalf("ack: %d %q", rec.Code, rec.Body.String())
	}
	fwd.RefuseHandle(domain.ReceiptHandle{Partition: 1, Offset: 3, Nonce: 11}, domain.ErrLeaseGone)
	wantError(t, f.ack("t", "1:3:11", ""), http.StatusGone, "receipt handle no longer matches an active reservation")
}

// api.md §2.15.1, internals.md §5.9: a batch ack answers 503 for a dead
// owner's handles and 502 for a failed owner's, 200 overall, in order.
func TestBatchAckOwnerFailures(t *testing.T) {
	t.Parallel()
	f, fwd := routedFixture(t)
	fwd.FailNext(nil)
	rec := f.batchAck("t", "", handlesBody("1:0:1", "0:0:1"))
	want := `{"results":[{"status":502,"error":"the partition owner did not answer; the ack may have been applied; retry"},{"status":410,"error":"receipt handle no longer matches an active reservation"}]}` + "\n"
	if rec.Code != http.StatusOK || rec.Body.String() != want {
		t.Fatalf("got %d %s", rec.Code, rec.Body.String())
	}
	f.propose(&meta.MemberDead{ID: "node-2"})
	rec = f.batchAck("t", "", handlesBody("1:0:1"))
	want = `{"results":[{"status":503,"error":"partition owner is down; retry later"}]}` + "\n"
	if rec.Code != http.StatusOK || rec.Body.String() != want {
		t.Fatalf("got %d %s", rec.Code, rec.Body.String())
	}
}

// api.md §2.14 local_only: a probe is answered from this node's own
// partitions only, without forwarding.
func TestLocalOnlyProbeNeverForwards(t *testing.T) {
	t.Parallel()
	f, fwd := routedFixture(t)
	fwd.Offer("node-2", domain.Delivery{Topic: "t", Partition: 1, Record: domain.Record{Payload: []byte(`1`)},
		Handle: &domain.ReceiptHandle{Partition: 1, Nonce: 1}})
	wantEmpty(t, f.get("/v1/topics/t/consume?local_only=1"))
	if n := len(fwd.Consumes()); n != 0 {
		t.Fatalf("%d forwards from a probe", n)
	}
}
