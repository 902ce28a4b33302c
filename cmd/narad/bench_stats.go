package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// maxLatencySamples bounds the memory of one latency series; past it the
// series keeps a uniform random sample (reservoir sampling).
const maxLatencySamples = 1 << 20

// latencies is a concurrent series of durations that answers percentiles.
type latencies struct {
	mu      sync.Mutex
	samples []time.Duration
	seen    uint64
	rng     *rand.Rand
	limit   int
}

func newLatencies(limit int) *latencies {
	return &latencies{limit: limit, rng: rand.New(rand.NewPCG(1, 2))}
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen++
	if len(l.samples) < l.limit {
		l.samples = append(l.samples, d)
		return
	}
	if j := l.rng.Uint64N(l.seen); j < uint64(l.limit) {
		l.samples[j] = d
	}
}

// percentiles returns the nearest-rank percentile for each p in ps (0 < p <= 100).
func (l *latencies) percentiles(ps ...float64) []time.Duration {
	l.mu.Lock()
	sorted := slices.Clone(l.samples)
	l.mu.Unlock()
	slices.Sort(sorted)
	out := make([]time.Duration, len(ps))
	for i, p := range ps {
		out[i] = percentile(sorted, p)
	}
	return out
}

// percentile is the nearest-rank percentile of sorted: the smallest value
// with at least p% of the values at or below it; 0 for no values.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// Per-sequence state of the ledger.
const (
	seqAccepted uint8 = 1 << iota // the produce answered 202
	seqFailed                     // the produce failed (its fate is unknown)
)

// ledger accounts for every message of a bench run: which were accepted,
// which were consumed and how often. It closes drained() once producing has
// finished and every accepted message has been consumed at least once.
type ledger struct {
	mu          sync.Mutex
	state       []uint8 // by sequence
	deliveries  []uint8 // by sequence, saturating at 255
	accepted    int
	failed      int
	unique      int
	duplicates  int
	outstanding int // accepted, not yet consumed
	producing   bool
	done        chan struct{}
	closed      bool
}

// ledgerSummary is a ledger's final account.
type ledgerSummary struct {
	Accepted   int `json:"accepted"`
	Failed     int `json:"failed"`
	Consumed   int `json:"consumed"`   // distinct messages delivered at least once
	Duplicates int `json:"duplicates"` // deliveries beyond the first
	Lost       int `json:"lost"`       // accepted and never delivered
	// Unconfirmed counts messages delivered although their produce failed
	// (an ambiguous failure that had in fact stored them).
	Unconfirmed int `json:"unconfirmed"`
}

func newLedger() *ledger {
	return &ledger{producing: true, done: make(chan struct{})}
}

func (l *ledger) grow(seq uint64) {
	for uint64(len(l.state)) <= seq {
		l.state = append(l.state, 0)
		l.deliveries = append(l.deliveries, 0)
	}
}

// produced records a produce's outcome for message seq.
func (l *ledger) produced(seq uint64, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.grow(seq)
	if !ok {
		l.state[seq] |= seqFailed
		l.failed++
		return
	}
	l.state[seq] |= seqAccepted
	l.accepted++
	if l.deliveries[seq] == 0 {
		l.outstanding++
	}
}

// consumed records one delivery of message seq and reports whether it was the first.
func (l *ledger) consumed(seq uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.grow(seq)
	first := l.deliveries[seq] == 0
	if l.deliveries[seq] < math.MaxUint8 {
		l.deliveries[seq]++
	}
	if !first {
		l.duplicates++
		return false
	}
	l.unique++
	if l.state[seq]&seqAccepted != 0 {
		l.outstanding--
		l.maybeClose()
	}
	return true
}

// producersDone says no more produce outcomes will come.
func (l *ledger) producersDone() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.producing = false
	l.maybeClose()
}

func (l *ledger) maybeClose() {
	if !l.producing && l.outstanding == 0 && !l.closed {
		l.closed = true
		close(l.done)
	}
}

// drained is closed once producing has finished and nothing accepted is outstanding.
func (l *ledger) drained() <-chan struct{} { return l.done }

// counts returns the accepted, failed and distinct consumed counts so far.
func (l *ledger) counts() (accepted, failed, consumed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.accepted, l.failed, l.unique
}

func (l *ledger) summary() ledgerSummary {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := ledgerSummary{Accepted: l.accepted, Failed: l.failed, Consumed: l.unique, Duplicates: l.duplicates, Lost: l.outstanding}
	for i, st := range l.state {
		if st&seqAccepted == 0 && l.deliveries[i] > 0 {
			s.Unconfirmed++
		}
	}
	return s
}
