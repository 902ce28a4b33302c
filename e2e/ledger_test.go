package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/narad/narad/adapters/httpclient"
)

// ledger accounts for every message: what got a 202, and how often each id
// was delivered.
type ledger struct {
	mu        sync.Mutex
	accepted  map[string][]byte // id -> payload as produced
	delivered map[string]int
	mismatch  []string
}

func newLedger() *ledger {
	return &ledger{accepted: map[string][]byte{}, delivered: map[string]int{}}
}

func (l *ledger) accept(id string, payload []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.accepted[id] = payload
}

// deliver records one delivery of m, checking its bytes against the produce.
func (l *ledger) deliver(m httpclient.Message) {
	id := string(m.Key)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.delivered[id]++
	want, ok := l.accepted[id]
	if ok && !sameBytes(want, m) {
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

// report returns how many accepted ids were never delivered and how many
// deliveries were duplicates.
func (l *ledger) report() (lost []string, duplicates int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id := range l.accepted {
		if l.delivered[id] == 0 {
			lost = append(lost, id)
		}
	}
	for _, n := range l.delivered {
		if n > 1 {
			duplicates += n - 1
		}
	}
	return lost, duplicates
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

// drain consumes in batches and acks until every accepted id is delivered
// or consumes come back empty twice in a row.
func drain(ctx context.Context, t *testing.T, c *httpclient.Client, topic string, l *ledger, batch int) {
	t.Helper()
	empty := 0
	for empty < 2 {
		res, err := c.Consume(ctx, topic, httpclient.ConsumeOptions{Max: batch, Wait: waitPerPoll})
		if err != nil {
			t.Fatalf("consume: %v", err)
		}
		if len(res.Messages) == 0 {
			empty++
			continue
		}
		empty = 0
		handles := make([]string, 0, len(res.Messages))
		for _, m := range res.Messages {
			l.deliver(m)
			handles = append(handles, m.ReceiptHandle)
		}
		results, err := c.AckBatch(ctx, topic, handles, httpclient.OpAck)
		if err != nil {
			t.Fatalf("ack batch: %v", err)
		}
		for i, r := range results {
			if r.Status != 204 {
				t.Fatalf("ack of %s: %d %s", handles[i], r.Status, r.Error)
			}
		}
	}
}
