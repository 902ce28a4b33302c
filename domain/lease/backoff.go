package lease

import "math"

// Backoff constants.
const (
	// uniformBits is how many random bits a jitter draw keeps: a 64-bit draw
	// x becomes u = (x >> (64-uniformBits)) / 2^uniformBits, in [0, 1).
	uniformBits = 53
	// deliveriesMax is where an offset's delivery count saturates.
	deliveriesMax = math.MaxInt32
)

// Backoff is a partition's redelivery backoff (the topic's redelivery
// policy): after its nth delivery ends in a plain nack (Release) or a
// lapsed consumer lease, an offset stays out of delivery for Delay(n, u).
// The zero value (InitialMs <= 0) is no policy.
type Backoff struct {
	InitialMs  int64   // the wait after the first delivery
	Multiplier float64 // each further delivery multiplies the wait (below 1 counts as 1)
	MaxMs      int64   // the wait's cap (below InitialMs counts as InitialMs)
	Jitter     float64 // up to this share of the wait is taken off at random (clamped to 0..1)
}

// set reports whether b is a policy rather than none.
func (b Backoff) set() bool { return b.InitialMs > 0 }

// Delay is the wait after an offset's deliveries-th delivery (below 1
// counts as 1), with u in [0, 1) the jitter draw: d = min(InitialMs *
// Multiplier^(deliveries-1), MaxMs) rounded to the millisecond, less
// floor(d * Jitter * u). It is 0 for no policy and otherwise from 1 to
// max(MaxMs, InitialMs) whatever the inputs: the power is taken in floating
// point, so a huge count saturates at the cap instead of overflowing, and
// out-of-range fields or draws are clamped.
func (b Backoff) Delay(deliveries int, u float64) int64 {
	if !b.set() {
		return 0
	}
	capMs := max(b.MaxMs, b.InitialMs)
	d := b.InitialMs
	if m := b.Multiplier; m > 1 && deliveries > 1 { // NaN and m <= 1 never grow
		d = capMs
		if w := float64(b.InitialMs) * math.Pow(m, float64(deliveries-1)); w < float64(capMs) {
			d = min(max(int64(math.Round(w)), b.InitialMs), capMs)
		}
	}
	j := b.Jitter
	if !(j > 0) || !(u > 0) { // NaN, none, or a zero draw
		return d
	}
	cut := math.Floor(float64(d) * min(j, 1) * min(u, 1))
	if cut >= float64(d) { // only a draw of 1 or more, or rounding, gets here
		return 1
	}
	return min(max(d-int64(cut), 1), d)
}

// SetBackoff applies the topic's current redelivery backoff; the zero
// Backoff removes it. It is called on every reservation and costs a
// comparison when the policy is unchanged. Delivery counting starts when a
// policy is set (earlier deliveries are not counted) and its counts are
// dropped when the policy is removed.
func (s *Shard) SetBackoff(b Backoff) {
	if !b.set() {
		b = Backoff{}
	}
	if b == s.backoff {
		return
	}
	s.backoff = b
	switch {
	case !b.set():
		s.deliveries = nil
	case s.deliveries == nil:
		s.deliveries = map[int64]int32{}
	}
}

// Backoff is the redelivery backoff in force (the zero Backoff for none).
func (s *Shard) Backoff() Backoff { return s.backoff }

// Deliveries is how many times offset was leased to a consumer while a
// backoff was set and it stayed unsettled (0 when not counted): Reserve
// counts; Extend, Defer and the backoff's own holds do not; an ack, a skip,
// the frontier passing it or GiveBack forget it.
func (s *Shard) Deliveries(offset int64) int { return int(s.deliveries[offset]) }

// GiveBack frees a live lease that never reached a consumer (read failed,
// or the reply or the waiter went away) so the offset can be delivered
// again at once: unlike Release it is no nack, so no backoff applies and
// the reservation's delivery is taken back from the count.
func (s *Shard) GiveBack(offset int64, nonce uint64, nowMs int64) error {
	if err := s.check(offset, nonce, nowMs); err != nil {
		return err
	}
	if n, ok := s.deliveries[offset]; ok {
		if n <= 1 {
			delete(s.deliveries, offset)
		} else {
			s.deliveries[offset] = n - 1
		}
	}
	s.unlease(offset)
	return nil
}

// countDelivery counts one more delivery of offset (saturating).
func (s *Shard) countDelivery(offset int64) {
	if n := s.deliveries[offset]; n < deliveriesMax {
		s.deliveries[offset] = n + 1
	}
}

// holdBack defers offset, whose delivery ended at fromMs (a nack now, or
// a lease's expiry), until fromMs plus the backoff's wait for its count,
// when that is after nowMs; it reports whether it did.
func (s *Shard) holdBack(offset, fromMs, nowMs int64) bool {
	until := addMs(fromMs, s.backoff.Delay(s.Deliveries(offset), s.uniform()))
	if until <= nowMs {
		return false
	}
	s.lease(offset, until, true)
	return true
}

// uniform draws u in [0, 1) from the shard's own stream, so a seeded shard
// jitters deterministically.
func (s *Shard) uniform() float64 {
	return float64(s.nonces.Uint64()>>(64-uniformBits)) / (1 << uniformBits)
}

// addMs is t+d for d >= 0 (a wait), saturating instead of wrapping.
func addMs(t, d int64) int64 {
	if t > math.MaxInt64-d {
		return math.MaxInt64
	}
	return t + d
}
