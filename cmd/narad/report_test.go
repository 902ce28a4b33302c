package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// reportBroker holds a healthy topic, a partial one, and an empty one.
func reportBroker(t *testing.T) *fakeBroker {
	t.Helper()
	b := newFakeBroker(t)
	b.addTopic("orders", 3, []string{"aa", "bb"}, []string{"c"}, []string{"dddd"})
	b.addTopic("pay", 3, []string{"x"}, []string{"yy"}).parts[2].down = true
	b.addTopic("zero", 3).meta.Role = "parent"
	return b
}

// ensure that server report sums available partitions per topic, marks partial topics and adds a total row.
func TestServerReport(t *testing.T) {
	t.Parallel()
	b := reportBroker(t)
	r := runCLI(t, cliOpts{}, "server", "report", "-s", b.url())
	want := "TOPIC   PARTS  MESSAGES  SIZE  OWNERS    ROLE\n" +
		"orders  3      4         9 B   n1,n2,n3  standalone\n" +
		"pay     3      2         3 B   n1,n2,n3  standalone [1 of 3 partitions unavailable]\n" +
		"zero    3      0         0 B   n1,n2,n3  parent\n" +
		"total   9      6         12 B  n1,n2,n3  3 topic(s)\n" +
		"1 topic(s) partial: 1 partition(s) unavailable and left out of the numbers\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d stdout\n%s\nwant\n%s\n%s", r.code, r.stdout, want, r.stderr)
	}
	if got := len(b.lines("GET /v1/topics/")); got != 3 {
		t.Fatalf("%d describes, want 3", got)
	}
}

// ensure that server report --json carries the same numbers for scripts.
func TestServerReportJSON(t *testing.T) {
	t.Parallel()
	b := reportBroker(t)
	r := runCLI(t, cliOpts{}, "server", "report", "--json", "-s", b.url())
	var got serverReport
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if len(got.Topics) != 3 || got.Topics[1].Unavailable != 1 || got.Total.Messages != 6 || got.Total.SizeBytes != 12 || got.PartialTopics != 1 {
		t.Fatalf("report %+v", got)
	}
	if !strings.Contains(r.stdout, `"unavailable_partitions": 1`) {
		t.Fatalf("json lacks the unavailable count: %s", r.stdout)
	}
}

// ensure that server alone prints its help and an unknown subcommand is a usage error.
func TestServerGroup(t *testing.T) {
	t.Parallel()
	if r := runCLI(t, cliOpts{}, "server"); r.code != 0 || !strings.Contains(r.stdout, "report") {
		t.Fatalf("exit %d: %s", r.code, r.stdout)
	}
	if r := runCLI(t, cliOpts{}, "server"); !strings.Contains(r.stdout, "start") {
		t.Fatalf("server help lacks start: %s", r.stdout)
	}
	if r := runCLI(t, cliOpts{}, "server", "frobnicate"); r.code != 2 {
		t.Fatalf("exit %d: an unknown server subcommand must be a usage error", r.code)
	}
}
