package deadletter

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/narad/narad/domain/goldentest"
)

// Ensure that every script in testdata/ still produces its recorded output
// (issue 19: golden tests of the receive-count state machine). Each command
// line is followed by its output lines ("> ..."); run with -update to
// rewrite them after a deliberate change.
func TestTableScripts(t *testing.T) {
	goldentest.Run(t, "testdata/*.txt", runScript)
}

// script drives one table as a consume path would: what a step plans is
// persisted (appended to disk) and then applied, unless the command says
// the append failed.
type script struct {
	t    *Table
	disk []Record
}

func (s *script) persist(r Record, failed bool) string {
	if r.Kind == 0 {
		return "nothing to persist"
	}
	if failed {
		return "persist " + show(r) + " failed: not applied"
	}
	s.disk = append(s.disk, r)
	s.t.Apply(r)
	return "persist " + show(r)
}

func runScript(t *testing.T, text string) string {
	var out strings.Builder
	s := &script{t: NewTable()}
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if strings.HasPrefix(line, "> ") {
			continue
		}
		out.WriteString(line + "\n")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, res := range s.run(t, line) {
			out.WriteString("> " + res + "\n")
		}
		out.WriteString("> " + state(s.t) + "\n")
	}
	return out.String()
}

func (s *script) run(t *testing.T, line string) []string {
	cmd, args := parse(t, line)
	failed := args["fail"] == "1"
	switch cmd {
	case "receive":
		st := s.t.Receive(num(t, args["offset"]), uint32(num(t, args["max"])))
		verdict := "deliver"
		if st.DeadLetter {
			verdict = "dead-letter"
		}
		return []string{fmt.Sprintf("%s count=%d", verdict, st.Count), s.persist(st.Record, failed)}
	case "nack":
		return []string{s.persist(s.t.Nacked(num(t, args["offset"]), args["reason"]), failed)}
	case "prune":
		settled := map[int64]bool{}
		for _, f := range strings.Split(args["settled"], ",") {
			settled[num(t, f)] = true
		}
		n := s.t.Prune(func(off int64) bool { return settled[off] })
		return []string{fmt.Sprintf("dropped %d", n)}
	case "replay":
		// a restart that reads back every record appended so far
		s.t = NewTable()
		for _, r := range s.disk {
			s.t.Apply(r)
		}
		return []string{fmt.Sprintf("replayed %d records", len(s.disk))}
	case "compact":
		// the file rewritten to the live records, then a restart
		s.disk = s.t.Live()
		s.t = NewTable()
		for _, r := range s.disk {
			s.t.Apply(r)
		}
		return []string{fmt.Sprintf("compacted to %d records", len(s.disk))}
	}
	t.Fatalf("unknown command %q", cmd)
	return nil
}

func parse(t *testing.T, line string) (string, map[string]string) {
	fields := strings.Fields(line)
	args := map[string]string{}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("bad argument %q in %q", f, line)
		}
		args[k] = v
	}
	return fields[0], args
}

func num(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("bad number %q", s)
	}
	return n
}

func show(r Record) string {
	switch r.Kind {
	case KindCount:
		return fmt.Sprintf("count(%d)=%d", r.Offset, r.Count)
	case KindIntent:
		return fmt.Sprintf("intent(%d) after %d", r.Offset, r.Count)
	case KindReason:
		return fmt.Sprintf("reason(%d)=%q", r.Offset, r.Reason)
	}
	return fmt.Sprintf("kind %d", r.Kind)
}

func state(t *Table) string {
	var parts []string
	for _, r := range t.Live() {
		parts = append(parts, show(r))
	}
	return fmt.Sprintf("table=[%s] intents=%v", strings.Join(parts, " "), t.Intents())
}
