package lease

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ensure that the wait grows by the multiplier per delivery from the
// initial wait and stops at the cap (the meta.Redelivery formula).
func TestDelayGrowsToTheCap(t *testing.T) {
	b := Backoff{InitialMs: 1000, Multiplier: 2, MaxMs: 5000}
	for n, want := range map[int]int64{1: 1000, 2: 2000, 3: 4000, 4: 5000, 5: 5000, 60: 5000} {
		if got := b.Delay(n, 0.99); got != want {
			t.Errorf("delivery %d: %d, want %d", n, got, want)
		}
	}
	frac := Backoff{InitialMs: 100, Multiplier: 1.5, MaxMs: 1000}
	for n, want := range map[int]int64{1: 100, 2: 150, 3: 225, 4: 338, 5: 506, 6: 759, 7: 1000} {
		if got := frac.Delay(n, 0); got != want {
			t.Errorf("x1.5, delivery %d: %d, want %d (rounded to the millisecond)", n, got, want)
		}
	}
}

// ensure that a huge delivery count or multiplier saturates at the cap
// instead of overflowing, even with the widest fields.
func TestDelayDoesNotOverflow(t *testing.T) {
	cases := []struct {
		b    Backoff
		n    int
		want int64
	}{
		{Backoff{InitialMs: 1, Multiplier: 10, MaxMs: 43_200_000}, 1000, 43_200_000},
		{Backoff{InitialMs: 43_200_000, Multiplier: 10, MaxMs: 43_200_000}, 1000, 43_200_000},
		{Backoff{InitialMs: 1, Multiplier: 10, MaxMs: math.MaxInt64}, 1000, math.MaxInt64},
		{Backoff{InitialMs: 1, Multiplier: 10, MaxMs: math.MaxInt64}, math.MaxInt, math.MaxInt64},
		{Backoff{InitialMs: math.MaxInt64, Multiplier: 10, MaxMs: math.MaxInt64}, 2, math.MaxInt64},
		{Backoff{InitialMs: 1, Multiplier: math.Inf(1), MaxMs: 9}, 2, 9},
		{Backoff{InitialMs: 1, Multiplier: math.MaxFloat64, MaxMs: 9}, 3, 9},
		{Backoff{InitialMs: 1, Multiplier: 1 + 1e-15, MaxMs: 9}, math.MaxInt, 9},
		{Backoff{InitialMs: 7, Multiplier: 1, MaxMs: 9}, math.MaxInt, 7},
	}
	for _, c := range cases {
		if got := c.b.Delay(c.n, 0); got != c.want {
			t.Errorf("%+v delivery %d: %d, want %d", c.b, c.n, got, c.want)
		}
	}
}

// ensure that jitter takes off at most its share of the wait, and never
// all of it, for draws across [0, 1).
func TestDelayJitterStaysInBounds(t *testing.T) {
	b := Backoff{InitialMs: 1000, Multiplier: 2, MaxMs: 8000, Jitter: 0.25}
	if got := b.Delay(3, 0); got != 4000 {
		t.Fatalf("a zero draw: %d, want the full 4000", got)
	}
	if got := b.Delay(3, 0.5); got != 3500 {
		t.Fatalf("a draw of 0.5: %d, want 4000 - floor(4000*0.25*0.5) = 3500", got)
	}
	if got := b.Delay(3, math.Nextafter(1, 0)); got != 3001 {
		t.Fatalf("the largest draw: %d, want 3001", got)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		n, u := 1+r.IntN(10), r.Float64()
		d := min(int64(1000)<<(n-1), 8000)
		if got := b.Delay(n, u); got < d-d/4 || got > d {
			t.Fatalf("delivery %d draw %v: %d outside [%d, %d]", n, u, got, d-d/4, d)
		}
	}
	full := Backoff{InitialMs: 1, MaxMs: 1, Jitter: 1}
	if got := full.Delay(1, math.Nextafter(1, 0)); got != 1 {
		t.Fatalf("full jitter of 1 ms: %d, want 1", got)
	}
}

// ensure that out-of-range fields, counts and draws are clamped rather
// than trusted: no policy is 0, and every policy waits 1..max(MaxMs,
// InitialMs).
func TestDelayClampsDegenerateInputs(t *testing.T) {
	cases := []struct {
		name string
		b    Backoff
		n    int
		u    float64
		want int64
	}{
		{"no policy", Backoff{}, 3, 0.5, 0},
		{"negative initial", Backoff{InitialMs: -5, Multiplier: 2, MaxMs: 100}, 3, 0, 0},
		{"count 0 is the first", Backoff{InitialMs: 100, Multiplier: 2, MaxMs: 1000}, 0, 0, 100},
		{"negative count", Backoff{InitialMs: 100, Multiplier: 2, MaxMs: 1000}, math.MinInt, 0, 100},
		{"multiplier below 1", Backoff{InitialMs: 100, Multiplier: 0.5, MaxMs: 1000}, 5, 0, 100},
		{"negative multiplier", Backoff{InitialMs: 100, Multiplier: -3, MaxMs: 1000}, 4, 0, 100},
		{"NaN multiplier", Backoff{InitialMs: 100, Multiplier: math.NaN(), MaxMs: 1000}, 4, 0, 100},
		{"max below initial", Backoff{InitialMs: 100, Multiplier: 2, MaxMs: 10}, 4, 0, 100},
		{"negative max", Backoff{InitialMs: 100, Multiplier: 2, MaxMs: -1}, 1, 0, 100},
		{"jitter above 1", Backoff{InitialMs: 100, MaxMs: 100, Jitter: 7}, 1, 0.5, 50},
		{"negative jitter", Backoff{InitialMs: 100, MaxMs: 100, Jitter: -1}, 1, 0.5, 100},
		{"NaN jitter", Backoff{InitialMs: 100, MaxMs: 100, Jitter: math.NaN()}, 1, 0.5, 100},
		{"draw of 1", Backoff{InitialMs: 100, MaxMs: 100, Jitter: 1}, 1, 1, 1},
		{"draw above 1", Backoff{InitialMs: 100, MaxMs: 100, Jitter: 1}, 1, 9, 1},
		{"negative draw", Backoff{InitialMs: 100, MaxMs: 100, Jitter: 1}, 1, -1, 100},
		{"NaN draw", Backoff{InitialMs: 100, MaxMs: 100, Jitter: 1}, 1, math.NaN(), 100},
		{"infinite draw", Backoff{InitialMs: 100, MaxMs: 100, Jitter: 1}, 1, math.Inf(1), 1},
		// exactly 1024; the float product rounds the cut up by 1
		{"widest wait, full jitter", Backoff{InitialMs: math.MaxInt64, MaxMs: math.MaxInt64, Jitter: 1}, 1, math.Nextafter(1, 0), 1023},
	}
	for _, c := range cases {
		if got := c.b.Delay(c.n, c.u); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// ensure that for any inputs a policy waits from 1 to max(MaxMs, InitialMs).
func FuzzDelay(f *testing.F) {
	f.Add(int64(1000), 2.0, int64(5000), 0.5, 3, 0.5)
	f.Add(int64(1), 10.0, int64(43_200_000), 1.0, 1000, 0.999)
	f.Add(int64(math.MaxInt64), math.Inf(1), int64(-1), math.NaN(), math.MinInt, math.Inf(-1))
	f.Fuzz(func(t *testing.T, initial int64, mult float64, maxMs int64, jitter float64, n int, u float64) {
		if initial <= 0 {
			return
		}
		b := Backoff{InitialMs: initial, Multiplier: mult, MaxMs: maxMs, Jitter: jitter}
		if got := b.Delay(n, u); got < 1 || got > max(maxMs, initial) {
			t.Fatalf("%+v delivery %d draw %v: %d outside [1, %d]", b, n, u, got, max(maxMs, initial))
		}
	})
}

// ensure that a shard without a policy keeps no delivery counts, so its
// reserve and ack paths never touch them.
func TestNoPolicyCountsNothing(t *testing.T) {
	s := NewShard(-1, nil, Caps{MaxInFlight: 8, MaxAckedAhead: 8}, [32]byte{9})
	s.SetBackoff(Backoff{InitialMs: -1, Multiplier: 2, MaxMs: 10}) // no policy either
	l, _ := s.Reserve(0, 10, 0, 1000)
	if err := s.Release(l.Offset, l.Nonce, 1); err != nil {
		t.Fatal(err)
	}
	l, _ = s.Reserve(1, 10, 0, 1000)
	if s.deliveries != nil || s.Deliveries(l.Offset) != 0 || s.Backoff() != (Backoff{}) || s.Deferred() != 0 {
		t.Fatalf("counts %v, backoff %+v, deferred %d", s.deliveries, s.Backoff(), s.Deferred())
	}
}

// ensure that one purge re-holding many lapsed leases at once (enough to
// rebuild the expiry heap mid-loop) ends, holds each from its own expiry,
// and that the next purge frees them all.
func TestPurgeHoldsManyLapsedLeasesAndEnds(t *testing.T) {
	s := NewShard(-1, nil, Caps{MaxInFlight: 500, MaxAckedAhead: 8}, [32]byte{10})
	s.SetBackoff(Backoff{InitialMs: 1000, Multiplier: 2, MaxMs: 8000})
	for i := range int64(500) {
		if _, ok := s.Reserve(i, 1000, 0, 1000); !ok {
			t.Fatal("nothing reserved")
		}
	}
	if n := s.Purge(1499); n != 0 || s.Deferred() != 500 {
		t.Fatalf("purged %d, deferred %d: want every lease held", n, s.Deferred())
	}
	for o, h := range s.leases {
		if !h.deferred || h.expiryMs != o+1000+1000 {
			t.Fatalf("offset %d held %+v, want until %d", o, h, o+2000)
		}
	}
	if n := s.Purge(2499); n != 500 || s.InFlight() != 0 {
		t.Fatalf("purged %d, in flight %d", n, s.InFlight())
	}
	if len(s.expiries) > 2*len(s.leases)+16 {
		t.Fatalf("%d heap entries left for %d leases", len(s.expiries), len(s.leases))
	}
}

// ensure that with a policy set and toggled, random reserves, settles,
// expiries and retention jumps keep the shard consistent: every counted
// offset is unsettled and above the frontier, every hold ends within the
// cap, and Reserve still hands out the lowest free offset.
func TestBackoffKeepsTheShardConsistent(t *testing.T) {
	policy := Backoff{InitialMs: 5, Multiplier: 3, MaxMs: 40, Jitter: 0.5}
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 7))
		s := NewShard(-1, nil, Caps{MaxInFlight: 1 + r.IntN(20), MaxAckedAhead: 1 + r.IntN(20)}, [32]byte{byte(seed)})
		s.SetBackoff(policy)
		var held []Lease
		now, hwm, oldest := int64(0), int64(10), int64(0)
		for step := range 3000 {
			now += int64(r.IntN(4))
			switch k := r.IntN(12); {
			case k < 4:
				s.Purge(now)
				s.jumpTo(oldest)
				want := lowestFree(s, hwm)
				capped := len(s.leases) >= s.caps.MaxInFlight || s.settledAhead() >= s.caps.MaxAckedAhead
				before := s.Deliveries(want)
				l, ok := s.Reserve(now, hwm, oldest, int64(1+r.IntN(30)))
				if !capped && (ok != (want >= 0) || (ok && l.Offset != want)) {
					t.Fatalf("seed %d step %d: reserved %+v %v, the scan picks %d", seed, step, l, ok, want)
				}
				if ok && s.Backoff().set() && s.Deliveries(l.Offset) != before+1 {
					t.Fatalf("seed %d step %d: count %d after %d", seed, step, s.Deliveries(l.Offset), before)
				}
				if ok {
					held = append(held, l)
				}
			case k < 9 && len(held) > 0:
				i := r.IntN(len(held))
				l := held[i]
				held = append(held[:i], held[i+1:]...)
				switch r.IntN(6) {
				case 0:
					_ = s.Ack(l.Offset, l.Nonce, now)
				case 1, 2:
					_ = s.Release(l.Offset, l.Nonce, now)
				case 3:
					_ = s.SkipCorrupt(l.Offset, l.Nonce, now)
				case 4:
					_ = s.Defer(l.Offset, l.Nonce, now, int64(r.IntN(20)))
				default:
					_ = s.GiveBack(l.Offset, l.Nonce, now)
				}
			case k == 9:
				hwm += int64(r.IntN(6))
			case k == 10:
				if r.IntN(40) == 0 {
					s.SetBackoff(Backoff{})
				} else {
					s.SetBackoff(policy)
				}
			default:
				if r.IntN(20) == 0 {
					oldest = min(hwm, oldest+int64(r.IntN(8)))
				}
			}
			checkBackoffState(t, s, now, seed, step)
		}
	}
}

func checkBackoffState(t *testing.T, s *Shard, now int64, seed uint64, step int) {
	t.Helper()
	if !s.Backoff().set() && s.deliveries != nil {
		t.Fatalf("seed %d step %d: counts kept without a policy", seed, step)
	}
	for o, n := range s.deliveries {
		_, ahead := s.ahead[o]
		_, bad := s.corrupt[o]
		if o <= s.committed || ahead || bad || n < 1 {
			t.Fatalf("seed %d step %d: offset %d counted %d (frontier %d, ahead %v, corrupt %v)", seed, step, o, n, s.committed, ahead, bad)
		}
	}
	for o, h := range s.leases {
		if h.deferred && h.expiryMs > now+max(40, 20) {
			t.Fatalf("seed %d step %d: offset %d held until %d at %d", seed, step, o, h.expiryMs, now)
		}
	}
}

// BenchmarkReserveAckWithBackoff is BenchmarkReserveAck on a shard with a
// redelivery policy: each reserve counts a delivery, each ack forgets it.
func BenchmarkReserveAckWithBackoff(b *testing.B) {
	const inFlight = 1024
	s := NewShard(-1, nil, Caps{MaxInFlight: inFlight + 1, MaxAckedAhead: 1024}, [32]byte{7})
	s.SetBackoff(Backoff{InitialMs: 1000, Multiplier: 2, MaxMs: 60_000, Jitter: 0.1})
	hwm := int64(1 << 62)
	held := make([]Lease, 0, inFlight)
	for range inFlight {
		l, _ := s.Reserve(0, hwm, 0, 1<<40)
		held = append(held, l)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l, ok := s.Reserve(0, hwm, 0, 1<<40)
		if !ok {
			b.Fatal("nothing reserved")
		}
		oldest := held[i%inFlight]
		if err := s.Ack(oldest.Offset, oldest.Nonce, 0); err != nil {
			b.Fatal(err)
		}
		held[i%inFlight] = l
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reserve+ack/s")
}
