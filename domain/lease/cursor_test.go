package lease

import (
	"math/rand/v2"
	"testing"
)

// lowestFree is the reference rule of internals.md §5.2 without the
// cursor: the lowest offset in [committed+1, hwm) not leased, acked ahead
// or corrupt, or -1.
func lowestFree(s *Shard, hwm int64) int64 {
	for o := s.committed + 1; o < hwm; o++ {
		if s.free(o) {
			return o
		}
	}
	return -1
}

// ensure that the Reserve cursor never skips a free offset: over random
// reserves, acks, skips, releases, extends, expiries, hwm moves and
// retention jumps, every reservation is the lowest free offset the plain
// scan would pick (internals.md §5.2).
func TestReserveCursorMatchesScan(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 99))
		s := NewShard(int64(r.IntN(5))-1, []int64{3, 5, 8}, Caps{MaxInFlight: 1 + r.IntN(40), MaxAckedAhead: 1 + r.IntN(40)}, [32]byte{byte(seed)})
		var held []Lease
		now, hwm, oldest := int64(0), int64(10), int64(0)
		for step := range 3000 {
			now += int64(r.IntN(3))
			switch k := r.IntN(10); {
			case k < 4:
				s.Purge(now)
				s.jumpTo(oldest)
				want := lowestFree(s, hwm)
				capped := len(s.leases) >= s.caps.MaxInFlight || s.settledAhead() >= s.caps.MaxAckedAhead
				l, ok := s.Reserve(now, hwm, oldest, int64(1+r.IntN(50)))
				if !capped && (ok != (want >= 0) || (ok && l.Offset != want)) {
					t.Fatalf("seed %d step %d: reserved %+v %v, the scan picks %d", seed, step, l, ok, want)
				}
				if ok {
					held = append(held, l)
				}
			case k < 8 && len(held) > 0:
				i := r.IntN(len(held))
				l := held[i]
				held = append(held[:i], held[i+1:]...)
				switch r.IntN(4) {
				case 0:
					_ = s.Ack(l.Offset, l.Nonce, now)
				case 1:
					_ = s.Release(l.Offset, l.Nonce, now)
				case 2:
					_ = s.SkipCorrupt(l.Offset, l.Nonce, now)
				default:
					if e, err := s.Extend(l.Offset, l.Nonce, now, int64(r.IntN(50))); err == nil {
						held = append(held, e)
					}
				}
			case k == 8:
				hwm += int64(r.IntN(6))
			default:
				if r.IntN(20) == 0 {
					oldest = min(hwm, oldest+int64(r.IntN(8)))
				}
			}
		}
	}
}
