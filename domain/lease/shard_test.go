package lease

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/goldentest"
)

// ensure that every script in testdata/ still produces its recorded output.
// Each command line is followed by its output lines ("> ..."); run with
// -update to rewrite them after a deliberate change.
func TestShardScripts(t *testing.T) {
	goldentest.Run(t, "testdata/*.txt", runScript)
}

// runScript replays the commands of a script and returns the script with
// fresh output lines.
func runScript(t *testing.T, script string) string {
	var out strings.Builder
	var s *Shard
	nonces := map[int64]uint64{}
	vis := int64(1000)
	for _, line := range strings.Split(strings.TrimRight(script, "\n"), "\n") {
		if strings.HasPrefix(line, "> ") {
			continue
		}
		out.WriteString(line + "\n")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cmd, args := parse(t, line)
		var res string
		switch cmd {
		case "init":
			vis = args["vis"]
			s = NewShard(args["committed"], nil, Caps{MaxInFlight: int(args["inflight"]), MaxAckedAhead: int(args["ahead"])}, [32]byte{1})
			res = "ok"
		case "reserve":
			l, ok := s.Reserve(args["now"], args["hwm"], args["oldest"], vis)
			res = "none"
			if ok {
				nonces[l.Offset] = l.Nonce
				res = fmt.Sprintf("lease %d expires %d", l.Offset, l.ExpiryMs)
			}
		case "backoff":
			s.SetBackoff(Backoff{InitialMs: args["initial"], Multiplier: float64(args["mult_pct"]) / 100,
				MaxMs: args["max"], Jitter: float64(args["jitter_pct"]) / 100})
			res = "ok"
		case "ack", "skip", "extend", "release", "defer", "giveback":
			nonce := nonces[args["offset"]]
			if n, ok := args["nonce"]; ok {
				nonce = uint64(n)
			}
			res = settle(s, cmd, args["offset"], nonce, args["now"], vis, args["delay"])
		case "purge":
			res = fmt.Sprintf("purged %d", s.Purge(args["now"]))
		default:
			t.Fatalf("unknown command %q", cmd)
		}
		out.WriteString("> " + res + "\n> " + describe(s) + "\n")
	}
	return out.String()
}

func settle(s *Shard, cmd string, offset int64, nonce uint64, now, vis, delay int64) string {
	var err error
	switch cmd {
	case "ack":
		err = s.Ack(offset, nonce, now)
	case "skip":
		err = s.SkipCorrupt(offset, nonce, now)
	case "extend":
		var l Lease
		if l, err = s.Extend(offset, nonce, now, vis); err == nil {
			return fmt.Sprintf("extended %d to %d", offset, l.ExpiryMs)
		}
	case "release":
		err = s.Release(offset, nonce, now)
	case "defer":
		err = s.Defer(offset, nonce, now, delay)
	case "giveback":
		err = s.GiveBack(offset, nonce, now)
	}
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, domain.ErrLeaseGone):
		return "410 lease gone"
	}
	return "error " + err.Error()
}

func describe(s *Shard) string {
	leased := make([]int64, 0, len(s.leases))
	for o := range s.leases {
		leased = append(leased, o)
	}
	slices.Sort(leased)
	ahead := s.AckedAhead()
	slices.Sort(ahead)
	var corrupt []int64
	for o := range s.corrupt {
		corrupt = append(corrupt, o)
	}
	slices.Sort(corrupt)
	out := fmt.Sprintf("committed=%d leased=%v ahead=%v corrupt=%v", s.committed, leased, ahead, corrupt)
	if n := s.Deferred(); n > 0 {
		out += fmt.Sprintf(" deferred=%d", n)
	}
	if s.Backoff().set() {
		out += describeBackoff(s, leased)
	}
	return out
}

// describeBackoff lists, while a backoff is set, each deferred hold with
// the time it lapses and each counted offset with its deliveries.
func describeBackoff(s *Shard, leased []int64) string {
	var until, counts []string
	for _, o := range leased {
		if h := s.leases[o]; h.deferred {
			until = append(until, fmt.Sprintf("%d@%d", o, h.expiryMs))
		}
	}
	counted := make([]int64, 0, len(s.deliveries))
	for o := range s.deliveries {
		counted = append(counted, o)
	}
	slices.Sort(counted)
	for _, o := range counted {
		counts = append(counts, fmt.Sprintf("%d:%d", o, s.Deliveries(o)))
	}
	return fmt.Sprintf(" until=[%s] deliveries=[%s]", strings.Join(until, " "), strings.Join(counts, " "))
}

func parse(t *testing.T, line string) (string, map[string]int64) {
	fields := strings.Fields(line)
	args := map[string]int64{}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil {
			t.Fatalf("bad argument %q in %q", f, line)
		}
		args[k] = n
	}
	return fields[0], args
}

// ensure that nonces of fresh shards differ even for the same offsets (story F25).
func TestNoncesDifferAcrossSeeds(t *testing.T) {
	a := NewShard(-1, nil, Caps{MaxInFlight: 4, MaxAckedAhead: 4}, [32]byte{1})
	b := NewShard(-1, nil, Caps{MaxInFlight: 4, MaxAckedAhead: 4}, [32]byte{2})
	la, _ := a.Reserve(0, 10, 0, 1000)
	lb, _ := b.Reserve(0, 10, 0, 1000)
	if la.Offset != lb.Offset || la.Nonce == lb.Nonce {
		t.Fatalf("restart reused a nonce: %+v %+v", la, lb)
	}
	if err := b.Ack(la.Offset, la.Nonce, 1); !errors.Is(err, domain.ErrLeaseGone) {
		t.Fatalf("pre-restart handle acked a new lease: %v", err)
	}
}

// ensure that persisted acked-ahead offsets are restored and collapse into the frontier.
func TestRestoreFromPersistedState(t *testing.T) {
	s := NewShard(4, []int64{3, 6, 7, 9}, Caps{MaxInFlight: 8, MaxAckedAhead: 8}, [32]byte{})
	if s.Committed() != 4 {
		t.Fatalf("committed %d", s.Committed())
	}
	l, ok := s.Reserve(0, 20, 0, 1000)
	if !ok || l.Offset != 5 {
		t.Fatalf("first lease %+v %v, want offset 5", l, ok)
	}
	if err := s.Ack(5, l.Nonce, 1); err != nil {
		t.Fatal(err)
	}
	if s.Committed() != 7 {
		t.Fatalf("committed %d after acking the hole, want 7", s.Committed())
	}
}

// ensure that a retention jump counts only the unsettled records it skips (narad_consumer_dropped_messages).
func TestDroppedCountsUnsettledRecordsRetentionDeleted(t *testing.T) {
	s := NewShard(-1, nil, Caps{MaxInFlight: 8, MaxAckedAhead: 8}, [32]byte{3})
	l0, _ := s.Reserve(0, 20, 0, 1000)
	l1, _ := s.Reserve(0, 20, 0, 1000)
	if err := s.Ack(l1.Offset, l1.Nonce, 1); err != nil { // 1 acked ahead
		t.Fatal(err)
	}
	_ = l0
	if _, ok := s.Reserve(2, 20, 10, 1000); !ok { // oldest retained is 10: 0..9 gone
		t.Fatal("nothing reserved after the jump")
	}
	if got := s.Dropped(); got != 9 {
		t.Fatalf("dropped %d, want 9 (offsets 0 and 2..9; 1 was acked)", got)
	}
}

// ensure that the deliverable estimate (internals.md §5.5, story F41)
// subtracts leased and acked-ahead offsets and stays within the in-flight
// cap: it counts exactly what Reserve can still hand out.
func TestDeliverableCountsWhatReserveCanHandOut(t *testing.T) {
	s := NewShard(-1, nil, Caps{MaxInFlight: 3, MaxAckedAhead: 8}, [32]byte{4})
	if got := s.Deliverable(5, 0); got != 3 {
		t.Fatalf("fresh shard, 5 records, cap 3: %d", got)
	}
	l0, _ := s.Reserve(0, 5, 0, 1000)
	l1, _ := s.Reserve(0, 5, 0, 1000)
	if err := s.Ack(l1.Offset, l1.Nonce, 1); err != nil { // acked ahead
		t.Fatal(err)
	}
	if got := s.Deliverable(5, 0); got != 2 { // 2, 3, 4 free; room for 2 more leases
		t.Fatalf("after a lease and an ack ahead: %d, want 2", got)
	}
	if err := s.Ack(l0.Offset, l0.Nonce, 2); err != nil { // frontier to 1
		t.Fatal(err)
	}
	n := 0
	for ; ; n++ {
		if _, ok := s.Reserve(3, 5, 0, 1000); !ok {
			break
		}
	}
	if n != 3 || s.Deliverable(5, 0) != 0 || s.Deliverable(4, 0) != 0 {
		t.Fatalf("reserved %d, then deliverable %d", n, s.Deliverable(5, 0))
	}
}

// ensure that the estimate never promises what Reserve would not hand out:
// records retention deleted, or more than the frontier hole while the
// acked-ahead set is full (an estimate above Reserve would have the owner
// notify for records no claim can get).
func TestDeliverableMatchesReserveAtTheEdges(t *testing.T) {
	s := NewShard(-1, nil, Caps{MaxInFlight: 8, MaxAckedAhead: 2}, [32]byte{5})
	if got := s.Deliverable(10, 10); got != 0 {
		t.Fatalf("everything below the oldest retained offset: %d", got)
	}
	if got := s.Deliverable(10, 7); got != 3 {
		t.Fatalf("retention kept 7..9: %d", got)
	}
	s = NewShard(-1, []int64{2, 3}, Caps{MaxInFlight: 8, MaxAckedAhead: 2}, [32]byte{6})
	if got := s.Deliverable(10, 0); got != 1 {
		t.Fatalf("acked-ahead set full: %d, want the frontier hole only", got)
	}
	l, ok := s.Reserve(0, 10, 0, 1000)
	if !ok || l.Offset != 0 || s.Deliverable(10, 0) != 0 {
		t.Fatalf("after leasing the hole: %+v %v, deliverable %d", l, ok, s.Deliverable(10, 0))
	}
	if _, ok := s.Reserve(0, 10, 0, 1000); ok {
		t.Fatal("Reserve handed out more than the estimate")
	}
}
