package rebalance

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/narad/narad/domain/meta"
)

var update = flag.Bool("update", false, "rewrite the expected plans in testdata/ with the current output")

// inputEnd separates a scenario from the plan recorded for it.
const inputEnd = "----"

// ensure that every scenario in testdata/ still plans the moves recorded
// under it (internals.md §11.2); run with -update after a deliberate change,
// and read the diff.
//
// A scenario, one directive a line ('#' starts a comment):
//
//	members n1 n2 n3      alive members
//	draining n2           alive, draining
//	dead n4               members marked dead
//	max 8                 MaxInFlight
//	topic orders n1 n2 -  partition i owned by the i-th node ('-' unplaced,
//	                      'n1>n4' in flight from n1 to n4)
//	topic audit@orders …  a fan-out child of orders
func TestPlanGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			input, want, _ := strings.Cut(string(raw), inputEnd+"\n")
			s, err := parseState(input)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			got := render(s, Plan(s))
			if *update {
				if err := os.WriteFile(file, []byte(input+inputEnd+"\n"+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Fatalf("plan differs from %s (run with -update after checking):\n%s\nwant:\n%s", file, got, want)
			}
		})
	}
}

// render prints the moves and each member's count once they land, with
// the checks every plan must pass.
func render(s State, moves []meta.Move) string {
	var b strings.Builder
	for _, m := range moves {
		fmt.Fprintf(&b, "move %s/%d %s -> %s\n", m.Topic, m.Partition, m.From, m.To)
	}
	if len(moves) == 0 {
		b.WriteString("no moves\n")
	}
	after := landed(s, moves)
	var counts []string
	for _, m := range s.Members {
		counts = append(counts, fmt.Sprintf("%s=%d", m.ID, after[m.ID]))
	}
	fmt.Fprintf(&b, "after %s\n", strings.Join(counts, " "))
	for _, problem := range violations(s, moves) {
		fmt.Fprintf(&b, "VIOLATION %s\n", problem)
	}
	return b.String()
}

// landed counts each node's partitions once every move (planned or in
// flight) has landed.
func landed(s State, moves []meta.Move) map[string]int {
	out := map[string]int{}
	for _, a := range s.Assignments {
		switch {
		case a.Target != "":
			out[a.Target]++
		case a.Owner != "":
			out[a.Owner]++
		}
	}
	for _, m := range moves {
		out[m.From]--
		out[m.To]++
	}
	return out
}

// violations lists what no plan may do: exceed the in-flight bound, move a
// partition twice or one already in flight, move a dead owner's partition,
// or send one to a member that is not alive and accepting.
func violations(s State, moves []meta.Move) []string {
	status := map[string]meta.Member{}
	for _, m := range s.Members {
		status[m.ID] = m
	}
	inFlight := 0
	rows := map[string]meta.Assignment{}
	for _, a := range s.Assignments {
		rows[fmt.Sprintf("%s/%d", a.Topic, a.Partition)] = a
		if a.Target != "" {
			inFlight++
		}
	}
	var out []string
	if n := inFlight + len(moves); len(moves) > 0 && n > s.MaxInFlight {
		out = append(out, fmt.Sprintf("%d moves in flight over the bound %d", n, s.MaxInFlight))
	}
	seen := map[string]bool{}
	for _, m := range moves {
		key := fmt.Sprintf("%s/%d", m.Topic, m.Partition)
		row := rows[key]
		dst := status[m.To]
		switch {
		case seen[key]:
			out = append(out, key+" moved twice")
		case row.Target != "":
			out = append(out, key+" already in flight")
		case row.Owner != m.From || status[m.From].Status != meta.StatusAlive:
			out = append(out, key+" moved from a node that is not its alive owner")
		case dst.Status != meta.StatusAlive || dst.Draining:
			out = append(out, key+" sent to "+m.To+", which is not alive and accepting")
		}
		seen[key] = true
	}
	return out
}

func parseState(input string) (State, error) {
	s := State{MaxInFlight: MaxInFlightMovesDefault}
	members := map[string]*meta.Member{}
	var order []string
	member := func(id string) *meta.Member {
		if m, ok := members[id]; ok {
			return m
		}
		members[id] = &meta.Member{ID: id, Status: meta.StatusAlive}
		order = append(order, id)
		return members[id]
	}
	for n, line := range strings.Split(input, "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "members":
			for _, id := range f[1:] {
				member(id)
			}
		case "draining":
			for _, id := range f[1:] {
				member(id).Draining = true
			}
		case "dead":
			for _, id := range f[1:] {
				member(id).Status = meta.StatusDead
			}
		case "max":
			v, err := strconv.Atoi(f[1])
			if err != nil {
				return s, fmt.Errorf("line %d: %w", n+1, err)
			}
			s.MaxInFlight = v
		case "topic":
			if len(f) < 3 {
				return s, fmt.Errorf("line %d: topic needs a name and owners", n+1)
			}
			name, parent, _ := strings.Cut(f[1], "@")
			s.Topics = append(s.Topics, meta.Topic{Name: name, ID: name + "-id", Parent: parent, Partitions: int32(len(f) - 2)})
			for i, o := range f[2:] {
				if o == "-" {
					continue
				}
				owner, target, _ := strings.Cut(o, ">")
				s.Assignments = append(s.Assignments, meta.Assignment{Topic: name, TopicID: name + "-id", Partition: int32(i), Owner: owner, Target: target})
			}
		default:
			return s, fmt.Errorf("line %d: unknown directive %q", n+1, f[0])
		}
	}
	for _, id := range order {
		s.Members = append(s.Members, *members[id])
	}
	slices.SortFunc(s.Members, func(a, b meta.Member) int { return strings.Compare(a.ID, b.ID) })
	return s, nil
}
