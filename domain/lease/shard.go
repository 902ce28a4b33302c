package lease

import (
	"container/heap"
	"fmt"
	"math/rand/v2"

	"github.com/narad/narad/domain"
)

// Caps bound one partition's consumer state; both must be positive.
type Caps struct {
	MaxInFlight   int // simultaneously leased offsets
	MaxAckedAhead int // offsets settled above the frontier (acked ahead + corrupt)
}

// Lease is one reservation handed to a consumer.
type Lease struct {
	Offset   int64
	Nonce    uint64
	ExpiryMs int64
}

type held struct {
	nonce    uint64
	expiryMs int64
	deferred bool // held out of delivery (Defer, or a backoff), not by a consumer
}

// Shard is one partition's in-flight state. Not safe for concurrent use.
type Shard struct {
	committed int64 // highest offset with everything at or below it settled; -1 none
	leases    map[int64]held
	expiries  expiryHeap
	ahead     map[int64]struct{} // acked above the frontier
	corrupt   map[int64]struct{} // skipped as unreadable above the frontier
	caps      Caps
	nonces    *rand.ChaCha8
	// scan is a cursor for Reserve: no offset in (committed, scan) is free,
	// so the search for the lowest free offset starts at max(scan,
	// committed+1). Freeing an offset lowers it.
	scan int64
	// dropped counts unsettled records retention deleted (see Dropped).
	dropped int64
	// backoff is the redelivery policy (see SetBackoff); deliveries counts
	// the deliveries of each unsettled offset while it is set and is nil
	// while it is not, so a shard without a policy never touches it.
	backoff    Backoff
	deliveries map[int64]int32
}

// NewShard starts a shard at the persisted frontier committed (-1 for none)
// with the persisted acked-ahead offsets. seed feeds the nonce stream: give
// every shard fresh random bytes so handles never repeat across restarts.
func NewShard(committed int64, ahead []int64, caps Caps, seed [32]byte) *Shard {
	s := &Shard{
		committed: committed,
		leases:    map[int64]held{},
		ahead:     map[int64]struct{}{},
		corrupt:   map[int64]struct{}{},
		caps:      caps,
		nonces:    rand.NewChaCha8(seed),
		scan:      committed + 1,
	}
	for _, o := range ahead {
		if o > committed {
			s.ahead[o] = struct{}{}
		}
	}
	s.advance()
	return s
}

// Dropped counts the unsettled records retention deleted before they were
// acked (the frontier jumps), since the shard was made.
func (s *Shard) Dropped() int64 { return s.dropped }

// Committed is the frontier: every offset at or below it is settled.
func (s *Shard) Committed() int64 { return s.committed }

// AckedAhead lists the offsets acked above the frontier, for persistence.
func (s *Shard) AckedAhead() []int64 {
	out := make([]int64, 0, len(s.ahead))
	for o := range s.ahead {
		out = append(out, o)
	}
	return out
}

// InFlight is the number of live leases (after the last purge).
func (s *Shard) InFlight() int { return len(s.leases) }

// Deliverable estimates how many offsets in [oldest, hwm) Reserve could
// still hand out: those above the settled prefix less the leased ones and
// those settled ahead, no more than the in-flight cap leaves room for, and
// only the frontier hole while the acked-ahead set is full; never negative
// (the delivery-token estimate of internals.md §5.5; expired leases count
// until purged, so it errs low).
func (s *Shard) Deliverable(hwm, oldest int64) int {
	next := max(s.committed+1, oldest)
	room := int64(s.caps.MaxInFlight - len(s.leases))
	if next >= hwm || room <= 0 {
		return 0
	}
	if s.settledAhead() >= s.caps.MaxAckedAhead {
		if _, leased := s.leases[next]; leased {
			return 0
		}
		return 1
	}
	n := hwm - next - int64(len(s.leases)+s.settledAhead())
	if next > s.committed+1 { // retention outran the frontier: count only what it kept
		n = hwm - next - above(s.leases, next) - above(s.ahead, next) - above(s.corrupt, next)
	}
	return int(max(min(n, room), 0))
}

// above counts the offsets of m at or above from.
func above[V any](m map[int64]V, from int64) int64 {
	n := int64(0)
	for o := range m {
		if o >= from {
			n++
		}
	}
	return n
}

// SetCaps applies altered topic caps; they bound new reservations and acks.
func (s *Shard) SetCaps(c Caps) { s.caps = c }

// Reserve leases the next deliverable offset below hwm for visibilityMs:
// the lowest offset above the frontier that is not leased, acked ahead or
// corrupt. While the acked-ahead set is full only the frontier hole itself
// may be leased (internals.md §5.2). oldest is the lowest retained offset: a
// frontier below it jumps up to it first. ok is false when nothing is free.
func (s *Shard) Reserve(nowMs, hwm, oldest, visibilityMs int64) (l Lease, ok bool) {
	s.Purge(nowMs)
	s.jumpTo(oldest)
	if len(s.leases) >= s.caps.MaxInFlight {
		return Lease{}, false
	}
	next := s.committed + 1
	if s.settledAhead() >= s.caps.MaxAckedAhead {
		if _, leased := s.leases[next]; leased || next >= hwm {
			return Lease{}, false
		}
		return s.deliver(next, nowMs+visibilityMs), true
	}
	o := max(s.scan, next)
	for o < hwm && !s.free(o) {
		o++
	}
	s.scan = o
	if o >= hwm {
		return Lease{}, false
	}
	s.scan = o + 1
	return s.deliver(o, nowMs+visibilityMs), true
}

// deliver leases offset to a consumer until expiryMs, counting the delivery
// while a backoff is set.
func (s *Shard) deliver(offset, expiryMs int64) Lease {
	if s.deliveries != nil {
		s.countDelivery(offset)
	}
	return s.lease(offset, expiryMs, false)
}

// Ack settles a leased offset. At the frontier it advances the frontier over
// every contiguous settled offset; above it the offset is parked in the
// acked-ahead set. Acks are always accepted, even past the acked-ahead cap
// (api.md §5.7: the cap gates new deliveries only, so the set stays bounded
// by the sum of both caps); v2's 503 here fed the ack-503 spiral (story F7).
// A lapsed or foreign lease answers domain.ErrLeaseGone.
func (s *Shard) Ack(offset int64, nonce uint64, nowMs int64) error {
	if err := s.check(offset, nonce, nowMs); err != nil {
		return err
	}
	delete(s.leases, offset)
	if s.deliveries != nil {
		delete(s.deliveries, offset)
	}
	s.ahead[offset] = struct{}{}
	s.advance()
	return nil
}

// SkipCorrupt settles a reserved offset whose record cannot be read, with the
// reservation's own nonce (so no client can force a skip). It counts against
// the acked-ahead cap until the frontier passes it.
func (s *Shard) SkipCorrupt(offset int64, nonce uint64, nowMs int64) error {
	if err := s.check(offset, nonce, nowMs); err != nil {
		return err
	}
	delete(s.leases, offset)
	if s.deliveries != nil {
		delete(s.deliveries, offset)
	}
	s.corrupt[offset] = struct{}{}
	s.advance()
	return nil
}

// Extend renews a live lease for visibilityMs from now, keeping its nonce.
func (s *Shard) Extend(offset int64, nonce uint64, nowMs, visibilityMs int64) (Lease, error) {
	if err := s.check(offset, nonce, nowMs); err != nil {
		return Lease{}, err
	}
	h := held{nonce: nonce, expiryMs: nowMs + visibilityMs}
	s.leases[offset] = h
	s.push(offset, h)
	return Lease{Offset: offset, Nonce: nonce, ExpiryMs: h.expiryMs}, nil
}

// Defer ends a live lease like Release but keeps the offset out of
// delivery until nowMs+delayMs: it is re-leased under a fresh nonce that no
// consumer holds, so the old handle is dead at once and the offset comes
// free when that lease lapses (a nack with a delay). While deferred it
// counts against the in-flight cap like any lease. The explicit delay wins
// over a backoff: it is kept as given, and its lapse frees the offset.
func (s *Shard) Defer(offset int64, nonce uint64, nowMs, delayMs int64) error {
	if err := s.check(offset, nonce, nowMs); err != nil {
		return err
	}
	s.lease(offset, nowMs+max(delayMs, 0), true)
	return nil
}

// Deferred is how many of the live leases (after the last purge) are held
// out of delivery (a nack with a delay, or a backoff) rather than by a
// consumer.
func (s *Shard) Deferred() int {
	n := 0
	for _, h := range s.leases {
		if h.deferred {
			n++
		}
	}
	return n
}

// Release ends a live lease (a NACK): without a backoff the offset can be
// delivered again at once; with one it is deferred like Defer for the
// backoff's wait after its latest delivery. A reservation that never
// reached a consumer goes back with GiveBack instead.
func (s *Shard) Release(offset int64, nonce uint64, nowMs int64) error {
	if err := s.check(offset, nonce, nowMs); err != nil {
		return err
	}
	if s.backoff.set() && s.holdBack(offset, nowMs, nowMs) {
		return nil
	}
	s.unlease(offset)
	return nil
}

// Purge drops every lease expired at nowMs and reports how many offsets it
// freed. With a backoff, a lapsed consumer lease is deferred instead until
// its expiry plus the backoff's wait, when that is still after nowMs; a
// lapsed deferred hold is freed (no second wait). The loop ends: a re-held
// lease expires after nowMs, and a deferred one is never re-held here.
func (s *Shard) Purge(nowMs int64) int {
	n := 0
	for len(s.expiries) > 0 && s.expiries[0].expiryMs <= nowMs {
		e := heap.Pop(&s.expiries).(expiry)
		h, ok := s.leases[e.offset]
		if !ok || h.nonce != e.nonce || h.expiryMs != e.expiryMs {
			continue // superseded
		}
		if !h.deferred && s.backoff.set() && s.holdBack(e.offset, h.expiryMs, nowMs) {
			continue
		}
		s.unlease(e.offset)
		n++
	}
	return n
}

func (s *Shard) check(offset int64, nonce uint64, nowMs int64) error {
	s.Purge(nowMs)
	if h, ok := s.leases[offset]; !ok || h.nonce != nonce {
		return fmt.Errorf("offset %d: %w", offset, domain.ErrLeaseGone)
	}
	return nil
}

// unlease drops the lease on offset, making it free again: the Reserve
// cursor moves back to it if it was above.
func (s *Shard) unlease(offset int64) {
	delete(s.leases, offset)
	s.scan = min(s.scan, offset)
}

func (s *Shard) settledAhead() int { return len(s.ahead) + len(s.corrupt) }

func (s *Shard) free(o int64) bool {
	if _, ok := s.leases[o]; ok {
		return false
	}
	if _, ok := s.ahead[o]; ok {
		return false
	}
	_, bad := s.corrupt[o]
	return !bad
}

// lease holds offset until expiryMs under a fresh nonce; deferred marks a
// hold by a delayed nack rather than a consumer.
func (s *Shard) lease(offset, expiryMs int64, deferred bool) Lease {
	nonce := s.nonces.Uint64()
	for nonce == 0 {
		nonce = s.nonces.Uint64()
	}
	h := held{nonce: nonce, expiryMs: expiryMs, deferred: deferred}
	s.leases[offset] = h
	s.push(offset, h)
	return Lease{Offset: offset, Nonce: nonce, ExpiryMs: expiryMs}
}

// advance moves the frontier over the contiguous run of settled offsets.
func (s *Shard) advance() {
	for {
		next := s.committed + 1
		if _, ok := s.ahead[next]; ok {
			delete(s.ahead, next)
		} else if _, ok := s.corrupt[next]; ok {
			delete(s.corrupt, next)
		} else {
			return
		}
		s.committed = next
	}
}

// jumpTo moves a frontier that retention outran up to oldest-1, dropping the
// state below it (internals.md §5.2, "retention outran the consumer").
func (s *Shard) jumpTo(oldest int64) {
	if s.committed+1 >= oldest {
		return
	}
	settled := 0 // offsets of the skipped range that were already settled
	for _, set := range []map[int64]struct{}{s.ahead, s.corrupt} {
		for o := range set {
			if o < oldest {
				settled++
			}
		}
	}
	s.dropped += oldest - 1 - s.committed - int64(settled)
	s.committed = oldest - 1
	for o := range s.leases {
		if o <= s.committed {
			delete(s.leases, o)
		}
	}
	for o := range s.deliveries { // nil without a backoff
		if o <= s.committed {
			delete(s.deliveries, o)
		}
	}
	for _, set := range []map[int64]struct{}{s.ahead, s.corrupt} {
		for o := range set {
			if o <= s.committed {
				delete(set, o)
			}
		}
	}
	s.advance()
}

func (s *Shard) push(offset int64, h held) {
	heap.Push(&s.expiries, expiry{offset: offset, nonce: h.nonce, expiryMs: h.expiryMs})
	if len(s.expiries) > 2*len(s.leases)+16 {
		s.rebuildExpiries()
	}
}

// rebuildExpiries drops superseded heap entries once they outnumber live ones.
func (s *Shard) rebuildExpiries() {
	s.expiries = s.expiries[:0]
	for o, h := range s.leases {
		s.expiries = append(s.expiries, expiry{offset: o, nonce: h.nonce, expiryMs: h.expiryMs})
	}
	heap.Init(&s.expiries)
}
