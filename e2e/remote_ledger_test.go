package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// shipRec names one record produced on A: its key and the key's sequence
// number, both inside its payload {"k":key,"seq":n}.
type shipRec struct {
	key string
	seq int
}

// shipPos is where B holds a copy: the target's incarnation (one collector
// each, counted from 1), partition and offset.
type shipPos struct {
	epoch, part int
	off         int64
}

// shipLedger accounts for every record A accepted and every copy B holds.
// Remote delivery is at least once (api.md §5.8), so a record may have
// several copies; consume redeliveries of one copy are told apart by its
// position.
type shipLedger struct {
	mu          sync.Mutex
	epoch       int
	accepted    map[shipRec]bool
	copies      map[shipRec]int
	at          map[shipPos]shipRec
	missing     int // accepted records without a copy yet
	redelivered int // deliveries of a position seen before
	bad         []string
}

func newShipLedger() *shipLedger {
	return &shipLedger{accepted: map[shipRec]bool{}, copies: map[shipRec]int{}, at: map[shipPos]shipRec{}}
}

// accept records A's 202 for rec.
func (l *shipLedger) accept(rec shipRec) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.accepted[rec] {
		return
	}
	l.accepted[rec] = true
	if l.copies[rec] == 0 {
		l.missing++
	}
}

// deliver records one envelope consumed from B's incarnation epoch.
func (l *shipLedger) deliver(epoch int, m httpclient.Message) {
	var v struct {
		K   string `json:"k"`
		Seq *int   `json:"seq"`
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if m.Binary || json.Unmarshal(m.Payload, &v) != nil || v.Seq == nil || string(m.Key) != v.K {
		l.bad = append(l.bad, fmt.Sprintf("partition %d offset %d: key %q payload %s", m.Partition, m.Offset, m.Key, m.Payload))
		return
	}
	pos, rec := shipPos{epoch, m.Partition, m.Offset}, shipRec{v.K, *v.Seq}
	if _, seen := l.at[pos]; seen {
		l.redelivered++
		return
	}
	l.at[pos] = rec
	if l.copies[rec]++; l.copies[rec] == 1 && l.accepted[rec] {
		l.missing--
	}
}

func (l *shipLedger) complete() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.missing == 0
}

// shipReport is the ledger's account: accepted records B lacks, extra
// copies, copies of records whose produce got no 202, and consume
// redeliveries.
type shipReport struct {
	accepted, copies, duplicates, unaccepted, redelivered int
	lost                                                  []shipRec
	bad                                                   []string
}

func (l *shipLedger) report() shipReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := shipReport{accepted: len(l.accepted), copies: len(l.at), redelivered: l.redelivered, bad: append([]string(nil), l.bad...)}
	for rec := range l.accepted {
		if l.copies[rec] == 0 {
			r.lost = append(r.lost, rec)
		}
	}
	sort.Slice(r.lost, func(i, j int) bool {
		return r.lost[i].key < r.lost[j].key || r.lost[i].key == r.lost[j].key && r.lost[i].seq < r.lost[j].seq
	})
	for rec, n := range l.copies {
		r.duplicates += n - 1
		if !l.accepted[rec] {
			r.unaccepted++
		}
	}
	return r
}

// orderViolations reads every B partition in offset order, as a replay of
// it would, and checks each key's order. A lane keeps a key's records in
// parent order (internals.md §7.2), but a resent request repeats records
// already stored (api.md §5.8), so a key's raw sequence may step back at a
// duplicate: only the first copy of each record must come in increasing
// order. regressions counts the steps back caused by duplicates.
func (l *shipLedger) orderViolations() (violations []string, regressions int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	type slot struct {
		epoch, part int
	}
	held := map[slot][]shipPos{}
	for pos := range l.at {
		s := slot{pos.epoch, pos.part}
		held[s] = append(held[s], pos)
	}
	for s, positions := range held {
		sort.Slice(positions, func(i, j int) bool { return positions[i].off < positions[j].off })
		seen, high, last := map[shipRec]bool{}, map[string]int{}, map[string]int{}
		for _, pos := range positions {
			rec := l.at[pos]
			prev, had := last[rec.key]
			last[rec.key] = rec.seq
			if seen[rec] {
				if had && rec.seq < prev {
					regressions++
				}
				continue
			}
			seen[rec] = true
			if top, ok := high[rec.key]; ok && rec.seq < top {
				violations = append(violations, fmt.Sprintf("key %s: seq %d at B partition %d offset %d (target %d) after seq %d",
					rec.key, rec.seq, s.part, pos.off, s.epoch, top))
				continue
			}
			high[rec.key] = rec.seq
		}
	}
	sort.Strings(violations)
	return violations, regressions
}

// keyedProducer makes records over a fixed set of keys, each key counting
// its own sequence.
type keyedProducer struct {
	keys []string
	next map[string]int
	r    *rand.Rand
}

func newKeyedProducer(keys int, seed uint64) *keyedProducer {
	kp := &keyedProducer{next: map[string]int{}, r: rand.New(rand.NewPCG(seed, seed^0x5eed))}
	for i := 0; i < keys; i++ {
		kp.keys = append(kp.keys, fmt.Sprintf("k-%03d", i))
	}
	return kp
}

// produce sends total records to A's parent in batches through c (api.md
// §2.13.1), one batch after another so each key keeps its order on A, and
// records each 202 in l. A refused batch is sent again, the same records,
// for up to a minute; produce returns how many sends were refused. after,
// when set, runs after each accepted batch with the count so far.
func (kp *keyedProducer) produce(t *testing.T, c *httpclient.Client, l *shipLedger, total, batch int, after func(done int)) (took time.Duration, refused int) {
	t.Helper()
	began := time.Now()
	for done := 0; done < total; {
		n := min(batch, total-done)
		msgs, recs := make([]httpclient.BatchMessage, n), make([]shipRec, n)
		for i := range msgs {
			key := kp.keys[kp.r.IntN(len(kp.keys))]
			recs[i] = shipRec{key, kp.next[key]}
			kp.next[key]++
			msgs[i] = httpclient.BatchMessage{Key: []byte(key), Payload: fmt.Appendf(nil, `{"k":%q,"seq":%d}`, key, recs[i].seq)}
		}
		deadline := time.Now().Add(time.Minute)
		for attempt := 1; ; attempt++ {
			_, err := c.ProduceBatch(t.Context(), remoteTopic, msgs)
			if err == nil {
				break
			}
			refused++
			if time.Now().After(deadline) {
				t.Fatalf("batch produce on A at %d: %v (attempt %d)", done, err, attempt)
			}
			if attempt == 1 {
				t.Logf("batch produce on A at %d refused, sending it again: %v", done, err)
			}
			time.Sleep(100 * time.Millisecond) // retry pacing, bounded by the deadline
		}
		for _, rec := range recs {
			l.accept(rec)
		}
		done += n
		if after != nil {
			after(done)
		}
	}
	return time.Since(began), refused
}

// produceAll is produce on a healthy A: every batch must get its 202 at
// the first send.
func (kp *keyedProducer) produceAll(t *testing.T, c *httpclient.Client, l *shipLedger, total int) time.Duration {
	t.Helper()
	took, refused := kp.produce(t, c, l, total, 500, nil)
	if refused > 0 {
		t.Fatalf("A refused %d batch produces", refused)
	}
	return took
}

// collector consumes B's target topic from every B node in batches and
// acks each batch (api.md §2.14.3, §2.15.1), recording every envelope.
type collector struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	errs    atomic.Int64
	lastErr atomic.Value
}

// collect starts a collector for the target's next incarnation; Cleanup
// stops it.
func (l *shipLedger) collect(t *testing.T, clients []*httpclient.Client) *collector {
	l.mu.Lock()
	l.epoch++
	epoch := l.epoch
	l.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	c := &collector{cancel: cancel}
	for _, bc := range clients {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			for ctx.Err() == nil {
				res, err := bc.Consume(ctx, remoteTopic, httpclient.ConsumeOptions{Max: 100, Wait: time.Second})
				if err != nil {
					c.failed(ctx, err)
					continue
				}
				handles := make([]string, 0, len(res.Messages))
				for _, m := range res.Messages {
					l.deliver(epoch, m)
					handles = append(handles, m.ReceiptHandle)
				}
				if len(handles) > 0 {
					if _, err := bc.AckBatch(ctx, remoteTopic, handles, httpclient.OpAck); err != nil {
						c.failed(ctx, err)
					}
				}
			}
		}()
	}
	t.Cleanup(c.stop)
	return c
}

// failed notes a consume or ack error and paces the retry.
func (c *collector) failed(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	c.errs.Add(1)
	c.lastErr.Store(err.Error())
	select {
	case <-ctx.Done():
	case <-time.After(200 * time.Millisecond): // retry pacing after an error
	}
}

func (c *collector) stop() {
	c.cancel()
	c.wg.Wait()
}

// liveA is an A node that runs.
func (p *remotePair) liveA() *node {
	for _, n := range p.a {
		select {
		case <-n.done:
		default:
			return n
		}
	}
	return p.a[0]
}

// settle waits until B holds a copy of every record A accepted, then
// accounts for all of them: duplicates and copies of unanswered produces
// are reported; a missing record is allowed only when A's nodes count it
// as dropped behind or skipped (api.md §5.8; internals.md §1.5), never
// silently. It returns how long the wait took.
func (p *remotePair) settle(t *testing.T, l *shipLedger, c *collector, within time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	for deadline := began.Add(within); !l.complete() && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond) // polling the ledger, bounded by the deadline
	}
	took := time.Since(began)
	r := l.report()
	row, _ := p.child(t, p.liveA())
	lastErr, _ := c.lastErr.Load().(string)
	t.Logf("accounting after %s: %d accepted on A, %d copies on B, %d lost, %d duplicates, %d copies of unanswered produces, %d consume redeliveries, %d consume errors (last %q); listing %s",
		took.Round(time.Millisecond), r.accepted, r.copies, len(r.lost), r.duplicates, r.unaccepted, r.redelivered, c.errs.Load(), lastErr, row.raw)
	if len(r.bad) > 0 {
		t.Errorf("%d envelopes on B are not as produced, e.g. %v", len(r.bad), r.bad[:min(3, len(r.bad))])
	}
	if len(r.lost) == 0 {
		return took
	}
	dropped, skipped := p.dropCounts(t)
	if float64(len(r.lost)) <= dropped+skipped {
		t.Logf("%d records never reached B, all counted on A: %v dropped behind, %v skipped", len(r.lost), dropped, skipped)
		return took
	}
	t.Fatalf("%d records silently missing on B after %s (A counts %v dropped behind, %v skipped); first %v",
		len(r.lost), within, dropped, skipped, r.lost[:min(5, len(r.lost))])
	return took
}

// checkOrder fails on a key whose records B holds out of parent order.
func checkOrder(t *testing.T, l *shipLedger) {
	t.Helper()
	violations, regressions := l.orderViolations()
	t.Logf("order: %d violations, %d raw steps back at duplicate copies", len(violations), regressions)
	if len(violations) > 0 {
		t.Fatalf("%d records on B out of their key's order, e.g. %v", len(violations), violations[:min(5, len(violations))])
	}
}
