package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"

	"github.com/narad/narad/adapters/httpclient"
)

// ledger accounts for every message: what got a 202, and how often each id
// (the message key) was delivered. Deliveries may come before the producer
// saw its 202, so bytes are checked whichever of the two comes second.
type ledger struct {
	mu        sync.Mutex
	accepted  map[string][]byte // id -> payload as produced
	delivered map[string]int
	first     map[string]httpclient.Message // first delivery of an id not (yet) accepted
	missing   int                           // accepted ids not delivered yet
	total     int                           // deliveries, duplicates included
	mismatch  []string
}

func newLedger() *ledger {
	return &ledger{accepted: map[string][]byte{}, delivered: map[string]int{}, first: map[string]httpclient.Message{}}
}

// accept records a 202 for id.
func (l *ledger) accept(id string, payload []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, dup := l.accepted[id]; dup {
		return
	}
	l.accepted[id] = payload
	if l.delivered[id] == 0 {
		l.missing++
		return
	}
	if m, ok := l.first[id]; ok {
		l.check(id, payload, m)
		delete(l.first, id)
	}
}

// deliver records one delivery of m, checking its bytes against the produce.
func (l *ledger) deliver(m httpclient.Message) {
	id := string(m.Key)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total++
	l.delivered[id]++
	want, ok := l.accepted[id]
	switch {
	case !ok && l.delivered[id] == 1:
		l.first[id] = m
	case ok && l.delivered[id] == 1:
		l.missing--
		l.check(id, want, m)
	case ok:
		l.check(id, want, m)
	}
}

func (l *ledger) check(id string, want []byte, m httpclient.Message) {
	if !sameBytes(want, m) {
		l.mismatch = append(l.mismatch, fmt.Sprintf("%s: produced %q, delivered payload %s", id, want, m.Payload))
	}
}

// sameBytes applies the client rule of api.md §2.14.1 to the envelope.
func sameBytes(want []byte, m httpclient.Message) bool {
	if json.Valid(want) && !m.Binary {
		return bytes.Equal(bytes.TrimSpace(want), m.Payload)
	}
	return bytes.Equal(want, m.Body)
}

// complete reports whether every accepted id was delivered at least once.
func (l *ledger) complete() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.missing == 0
}

// deliveries counts every delivery so far, duplicates included.
func (l *ledger) deliveries() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// counts returns how many ids got a 202 and how many of them are still
// undelivered.
func (l *ledger) counts() (accepted, missing int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.accepted), l.missing
}

// report returns the accepted ids never delivered and how many deliveries
// were duplicates.
func (l *ledger) report() (lost []string, duplicates int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id := range l.accepted {
		if l.delivered[id] == 0 {
			lost = append(lost, id)
		}
	}
	sort.Strings(lost)
	for _, n := range l.delivered {
		if n > 1 {
			duplicates += n - 1
		}
	}
	return lost, duplicates
}

// unaccepted counts ids delivered without a 202 the producer saw: sends
// whose answer was lost or an error but that were stored anyway (allowed,
// api.md §2.13).
func (l *ledger) unaccepted() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.first)
}

// payloadFor makes message i's payload: JSON, plain text or random binary.
func payloadFor(r *rand.Rand, i int) []byte {
	switch i % 3 {
	case 0:
		return []byte(fmt.Sprintf(`{"n":%d,"kind":"json","pad":"%d"}`, i, r.Uint64()))
	case 1:
		return []byte(fmt.Sprintf("plain text message %d, not JSON: %x", i, r.Uint32()))
	}
	b := make([]byte, 16+r.IntN(64))
	for j := range b {
		b[j] = byte(r.Uint32())
	}
	b[0] = 0xff // never valid UTF-8
	return b
}

// produceBatches produces total messages with ids prefix-00000 upward in
// batches of batch, batch k through via[k % len(via)], and records each
// 202'd message in l; any refusal fails the test.
func produceBatches(ctx context.Context, t *testing.T, via []*httpclient.Client, topic, prefix string, seed uint64, total, batch int, l *ledger) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed+1))
	for start := 0; start < total; start += batch {
		msgs := make([]httpclient.BatchMessage, 0, batch)
		for i := start; i < start+batch; i++ {
			msgs = append(msgs, httpclient.BatchMessage{Key: []byte(fmt.Sprintf("%s-%05d", prefix, i)), Payload: payloadFor(r, i)})
		}
		if _, err := via[(start/batch)%len(via)].ProduceBatch(ctx, topic, msgs); err != nil {
			t.Fatalf("batch at %d: %v", start, err)
		}
		for _, m := range msgs {
			l.accept(string(m.Key), m.Payload)
		}
	}
}

// drain consumes in batches and acks until every accepted id is delivered
// or consumes come back empty twice in a row.
func drain(ctx context.Context, t *testing.T, c *httpclient.Client, topic string, l *ledger, batch int) {
	t.Helper()
	for empty := 0; empty < 2; {
		n, err := consumeAndAck(ctx, c, topic, l, batch)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			empty++
			continue
		}
		empty = 0
	}
}

// consumeAndAck consumes up to batch messages, records each delivery in l
// and acks them in one batch. It returns how many came, and the first
// failure: of the consume, of the ack batch, or of one ack in it.
func consumeAndAck(ctx context.Context, c *httpclient.Client, topic string, l *ledger, batch int) (int, error) {
	res, err := c.Consume(ctx, topic, httpclient.ConsumeOptions{Max: batch, Wait: waitPerPoll})
	if err != nil {
		return 0, fmt.Errorf("consume %s: %w", topic, err)
	}
	if len(res.Messages) == 0 {
		return 0, nil
	}
	handles := make([]string, 0, len(res.Messages))
	for _, m := range res.Messages {
		l.deliver(m)
		handles = append(handles, m.ReceiptHandle)
	}
	results, err := c.AckBatch(ctx, topic, handles, httpclient.OpAck)
	if err != nil {
		return len(handles), fmt.Errorf("ack batch on %s: %w", topic, err)
	}
	for i, r := range results {
		if r.Status != 204 {
			return len(handles), fmt.Errorf("ack of %s: %d %s", handles[i], r.Status, r.Error)
		}
	}
	return len(handles), nil
}

// ensure that the ledger counts an id lost until its first delivery, whichever of the 202 and the delivery comes first, counts every further delivery as a duplicate, and checks bytes either way.
func TestLedgerAccounting(t *testing.T) {
	l := newLedger()
	msg := func(id, payload string) httpclient.Message {
		return httpclient.Message{Key: []byte(id), Payload: json.RawMessage(payload), Body: []byte(payload)}
	}
	l.accept("a", []byte(`{"n":1}`))
	l.deliver(msg("b", `{"n":2}`)) // delivered before its producer saw the 202
	if accepted, missing := l.counts(); accepted != 1 || missing != 1 || l.complete() || l.unaccepted() != 1 {
		t.Fatalf("accepted %d missing %d unaccepted %d", accepted, missing, l.unaccepted())
	}
	l.accept("b", []byte(`{"n":3}`)) // other bytes than delivered
	l.deliver(msg("a", `{"n":1}`))
	l.deliver(msg("a", `{"n":1}`))
	if !l.complete() || l.unaccepted() != 0 {
		t.Fatalf("complete %v unaccepted %d", l.complete(), l.unaccepted())
	}
	lost, dups := l.report()
	if len(lost) != 0 || dups != 1 || len(l.mismatch) != 1 {
		t.Fatalf("lost %v dups %d mismatch %v", lost, dups, l.mismatch)
	}
	l.accept("c", []byte("text"))
	if lost, _ := l.report(); len(lost) != 1 || lost[0] != "c" || l.complete() {
		t.Fatalf("lost %v", lost)
	}
}
