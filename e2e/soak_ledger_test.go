package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// soakLedger accounts for a soak's messages in bounded memory, so a run
// can last hours (internals.md §15.4): one byte per offered sequence (a
// delivery count and an accepted bit) plus the accepted messages not yet
// delivered. Payloads are not kept; each carries its own sequence and
// offered time, checked against the key on delivery. The exact ledger of
// ledger_test.go keeps every payload, which a long soak cannot afford.
type soakLedger struct {
	mu          sync.Mutex
	state       []uint8          // by sequence: soakAcceptedBit | deliveries (saturating)
	outstanding map[uint64]int64 // accepted, not delivered yet: sequence -> offered (unix ns)
	cur, total  soakCounts
	unknown     []string // deliveries of ids never offered, or whose payload does not match
}

const (
	soakAcceptedBit = 0x80
	soakDeliveries  = 0x7f
)

// soakCounts are the numbers of one report interval (or of the run).
type soakCounts struct {
	offered, shed, accepted, delivered, duplicates int
	latency                                        soakLatency // offered -> first delivery
}

// soakLatency is a histogram of durations in 1 ms buckets up to
// soakLatencyMax (longer ones fall in the last bucket), so a run of any
// length has exact-enough percentiles in fixed memory.
type soakLatency struct {
	counts []int
	n      int
}

const soakLatencyMax = 60 * time.Second

func (h *soakLatency) add(d time.Duration) {
	if h.counts == nil {
		h.counts = make([]int, int(soakLatencyMax/time.Millisecond)+1)
	}
	h.counts[max(0, min(int(d/time.Millisecond), len(h.counts)-1))]++
	h.n++
}

// quantile returns the upper bound of the bucket holding the q-quantile
// (0..1), 0 when empty.
func (h *soakLatency) quantile(q float64) time.Duration {
	rank := int(float64(h.n)*q + 0.999999)
	seen := 0
	for i, c := range h.counts {
		seen += c
		if c > 0 && seen >= rank {
			return time.Duration(i+1) * time.Millisecond
		}
	}
	return 0
}

func newSoakLedger() *soakLedger { return &soakLedger{outstanding: map[uint64]int64{}} }

// offer allocates n sequences and returns the first.
func (l *soakLedger) offer(n int) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	first := uint64(len(l.state))
	l.state = append(l.state, make([]uint8, n)...)
	l.cur.offered += n
	l.total.offered += n
	return first
}

// shed counts n offered messages the senders had no room for.
func (l *soakLedger) shed(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cur.shed += n
	l.total.shed += n
}

// accept records the 202 of sequences first..first+n-1, offered at the
// times given.
func (l *soakLedger) accept(first uint64, offered []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, at := range offered {
		seq := first + uint64(i)
		l.state[seq] |= soakAcceptedBit
		if l.state[seq]&soakDeliveries == 0 {
			l.outstanding[seq] = at
		}
	}
	l.cur.accepted += len(offered)
	l.total.accepted += len(offered)
}

// soakPayload is a soak message's body.
type soakPayload struct {
	Seq     uint64 `json:"seq"`
	Offered int64  `json:"t"`
	Pad     string `json:"pad"`
}

func soakKey(seq uint64) string { return "s-" + strconv.FormatUint(seq, 10) }

// deliver records one delivery of m, received at now.
func (l *soakLedger) deliver(m httpclient.Message, now time.Time) {
	var p soakPayload
	err := json.Unmarshal(m.Payload, &p)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil || string(m.Key) != soakKey(p.Seq) || p.Seq >= uint64(len(l.state)) {
		l.unknown = append(l.unknown, fmt.Sprintf("%s at %d:%d: %.80s", m.Key, m.Partition, m.Offset, m.Payload))
		return
	}
	s := l.state[p.Seq]
	if s&soakDeliveries > 0 {
		l.cur.duplicates++
		l.total.duplicates++
	} else {
		delete(l.outstanding, p.Seq)
		l.cur.delivered++
		l.total.delivered++
		lat := now.Sub(time.Unix(0, p.Offered))
		l.cur.latency.add(lat)
		l.total.latency.add(lat)
	}
	if s&soakDeliveries < soakDeliveries {
		l.state[p.Seq] = s + 1
	}
}

// rotate ends the current interval: it returns its counts and how many
// accepted messages offered before overdueBefore are still undelivered.
func (l *soakLedger) rotate(overdueBefore time.Time) (soakCounts, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.cur
	l.cur = soakCounts{}
	return c, l.overdue(overdueBefore.UnixNano())
}

func (l *soakLedger) overdue(before int64) int {
	n := 0
	for _, at := range l.outstanding {
		if at < before {
			n++
		}
	}
	return n
}

// missing returns how many accepted messages are undelivered, with a few
// of their ids.
func (l *soakLedger) missing() (int, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []string
	for seq := range l.outstanding {
		ids = append(ids, soakKey(seq))
	}
	sort.Strings(ids)
	return len(ids), first(ids)
}

// totals returns the run's counts and the unknown or mismatched
// deliveries.
func (l *soakLedger) totals() (soakCounts, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.total
	c.latency.counts = slices.Clone(c.latency.counts)
	return c, slices.Clone(l.unknown)
}

// String is one report line's numbers.
func (c soakCounts) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "offered %d accepted %d delivered %d duplicates %d", c.offered, c.accepted, c.delivered, c.duplicates)
	if c.shed > 0 {
		fmt.Fprintf(&b, " shed %d", c.shed)
	}
	fmt.Fprintf(&b, " produce-to-consume p50 %s p99 %s", c.latency.quantile(0.5), c.latency.quantile(0.99))
	return b.String()
}
