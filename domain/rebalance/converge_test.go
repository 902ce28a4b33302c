package rebalance

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/narad/narad/domain/meta"
)

// ensure that repeated passes, each landing the moves of the one before,
// reach a fixed point in a bounded number of passes for random clusters:
// every receiver then holds floor(T/R) or ceil(T/R) of the alive owners'
// partitions, a draining node holds none, dead owners keep theirs, and no
// pass breaks a rule (internals.md §11.2).
func TestPlanConvergesToBalance(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for round := range 300 {
		s := randomState(rng)
		for pass := 0; ; pass++ {
			moves := Plan(s)
			if v := violations(s, moves); len(v) > 0 {
				t.Fatalf("round %d pass %d: %v\n%s", round, pass, v, describe(s))
			}
			if len(moves) == 0 && inFlight(s) == 0 {
				break
			}
			if pass > 200 {
				t.Fatalf("round %d: no fixed point after %d passes\n%s", round, pass, describe(s))
			}
			s = land(s, moves)
		}
		checkBalanced(t, round, s)
	}
}

func randomState(rng *rand.Rand) State {
	n := 1 + rng.IntN(6)
	s := State{MaxInFlight: 1 + rng.IntN(MaxInFlightMovesDefault)}
	for i := range n {
		m := meta.Member{ID: fmt.Sprintf("n%d", i+1), Status: meta.StatusAlive}
		switch rng.IntN(8) {
		case 0:
			m.Status = meta.StatusDead
		case 1:
			m.Draining = true
		}
		s.Members = append(s.Members, m)
	}
	for ti := range 1 + rng.IntN(4) {
		name := fmt.Sprintf("t%d", ti)
		tp := meta.Topic{Name: name, ID: name, Partitions: int32(1 + rng.IntN(12))}
		if ti > 0 && rng.IntN(2) == 0 {
			tp.Parent = "t0"
		}
		s.Topics = append(s.Topics, tp)
		for p := range tp.Partitions {
			owner := s.Members[rng.IntN(n)].ID
			s.Assignments = append(s.Assignments, meta.Assignment{Topic: name, TopicID: name, Partition: p, Owner: owner})
		}
	}
	return s
}

// land completes the moves in flight and starts the planned ones.
func land(s State, moves []meta.Move) State {
	rows := make([]meta.Assignment, len(s.Assignments))
	for i, a := range s.Assignments {
		if a.Target != "" {
			a.Owner, a.Target = a.Target, ""
		}
		for _, m := range moves {
			if m.Topic == a.Topic && m.Partition == a.Partition {
				a.Target = m.To
			}
		}
		rows[i] = a
	}
	s.Assignments = rows
	return s
}

func inFlight(s State) int {
	n := 0
	for _, a := range s.Assignments {
		if a.Target != "" {
			n++
		}
	}
	return n
}

func checkBalanced(t *testing.T, round int, s State) {
	t.Helper()
	counts := landed(s, nil)
	total, receivers := 0, 0
	for _, m := range s.Members {
		if m.Status == meta.StatusAlive {
			total += counts[m.ID]
			if !m.Draining {
				receivers++
			}
		}
	}
	for _, m := range s.Members {
		c := counts[m.ID]
		switch {
		case m.Status != meta.StatusAlive:
		case receivers == 0:
		case m.Draining && c != 0:
			t.Fatalf("round %d: draining %s still holds %d\n%s", round, m.ID, c, describe(s))
		case !m.Draining && (c < total/receivers || c > (total+receivers-1)/receivers):
			t.Fatalf("round %d: %s holds %d of %d over %d receivers\n%s", round, m.ID, c, total, receivers, describe(s))
		}
	}
}

func describe(s State) string {
	return fmt.Sprintf("members %+v\nrows %+v", s.Members, s.Assignments)
}
