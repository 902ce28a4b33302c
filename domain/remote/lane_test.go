package remote

import (
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/narad/narad/domain"
)

// ensure that Lane hashes keys with FNV-32a, spreads keyless records by
// offset, and puts everything in lane 0 with one lane or fewer.
func TestLane(t *testing.T) {
	cases := []struct {
		key    string
		offset int64
		lanes  int
		want   int
	}{
		{"a", 7, 1, 0},
		{"a", 7, 0, 0},
		{"a", 7, -3, 0},
		{"", 7, 4, 3},
		{"", 8, 4, 0},
		{"", 0, 8, 0},
		{"", -1, 4, 3}, // never happens; still a lane
		{"a", 0, 8, 0xe40c292c % 8},
		{"a", 5, 8, 0xe40c292c % 8}, // the offset does not move a keyed record
		{"foobar", 0, 7, 0xbf9cf968 % 7},
	}
	for _, c := range cases {
		if got := Lane([]byte(c.key), c.offset, c.lanes); got != c.want {
			t.Errorf("Lane(%q, %d, %d) = %d, want %d", c.key, c.offset, c.lanes, got, c.want)
		}
	}
}

// ensure that the inline FNV-32a equals hash/fnv's for random keys.
func TestLaneMatchesHashFNV(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		key := randomBytes(r, 1+r.IntN(40))
		h := fnv.New32a()
		h.Write(key)
		for lanes := 2; lanes <= 9; lanes++ {
			if got, want := Lane(key, r.Int64(), lanes), int(h.Sum32()%uint32(lanes)); got != want {
				t.Fatalf("Lane(%x, _, %d) = %d, hash/fnv says %d", key, lanes, got, want)
			}
		}
	}
}

// ensure, for random slabs and many lane counts, that one key never spans
// lanes, that every record lands in exactly one lane, and that each lane
// keeps slab order.
func TestSplitLanesProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 300 {
		keys := make([][]byte, 1+r.IntN(20))
		for i := range keys {
			keys[i] = randomBytes(r, r.IntN(12)) // some empty: keyless
		}
		recs := make([]domain.Record, r.IntN(300))
		base := r.Int64N(1 << 40)
		for i := range recs {
			recs[i] = domain.Record{Offset: base + int64(i), Key: keys[r.IntN(len(keys))], Payload: []byte("x")}
		}
		for _, lanes := range []int{-1, 0, 1, 2, 3, 4, 5, 7, 8, 16, 100} {
			split := SplitLanes(recs, lanes)
			if want := max(lanes, 1); len(split) != want {
				t.Fatalf("round %d: %d lanes for %d", round, len(split), lanes)
			}
			laneOf := map[string]int{}
			seen := make([]bool, len(recs))
			for l, idx := range split {
				if !slices.IsSorted(idx) {
					t.Fatalf("round %d lanes %d: lane %d out of slab order: %v", round, lanes, l, idx)
				}
				for _, i := range idx {
					if seen[i] {
						t.Fatalf("record %d in two lanes", i)
					}
					seen[i] = true
					k := recs[i].Key
					if len(k) == 0 {
						continue
					}
					if prev, ok := laneOf[string(k)]; ok && prev != l {
						t.Fatalf("round %d lanes %d: key %x in lanes %d and %d", round, lanes, k, prev, l)
					}
					laneOf[string(k)] = l
				}
			}
			if slices.Contains(seen, false) {
				t.Fatalf("round %d lanes %d: a record is in no lane", round, lanes)
			}
		}
	}
}

// ensure that a slab stops before the record that would take its lane past
// 500 records or 1 MiB, and that a lane's first record always fits.
func TestSlabLen(t *testing.T) {
	keyless := func(n, size int) []domain.Record {
		out := make([]domain.Record, n)
		for i := range out {
			out[i] = domain.Record{Offset: int64(i), Payload: make([]byte, size)}
		}
		return out
	}
	cases := []struct {
		name  string
		recs  []domain.Record
		lanes int
		want  int
	}{
		{"empty", nil, 1, 0},
		{"under the record cap", keyless(400, 1), 1, 400},
		{"record cap, one lane", keyless(600, 1), 1, SlabMaxRecordsPerLane},
		{"record cap, two lanes", keyless(1200, 1), 2, 2 * SlabMaxRecordsPerLane},
		{"byte cap", keyless(10, 300<<10), 1, 3},
		{"byte cap per lane", keyless(10, 300<<10), 2, 6},
		{"a record bigger than the cap goes alone", keyless(3, 2<<20), 1, 1},
		{"exactly the byte cap", keyless(4, 256<<10), 1, 4},
		{"zero lanes as one", keyless(600, 1), 0, SlabMaxRecordsPerLane},
		{"many lanes", keyless(40, 1), 20, 40},
	}
	for _, c := range cases {
		if got := SlabLen(c.recs, c.lanes); got != c.want {
			t.Errorf("%s: SlabLen = %d, want %d", c.name, got, c.want)
		}
	}
	// A key counts its bytes too.
	recs := []domain.Record{
		{Offset: 0, Key: make([]byte, 1<<19), Payload: make([]byte, 1<<19)},
		{Offset: 1, Key: make([]byte, 1<<19), Payload: []byte("x")},
	}
	if got := SlabLen(recs, 1); got != 1 {
		t.Errorf("key bytes: SlabLen = %d, want 1", got)
	}
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}
