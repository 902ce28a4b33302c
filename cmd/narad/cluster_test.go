package main

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/httpclient"
)

// eventRow is the table row the CLI prints for ev, with runs of blanks squeezed.
func eventRow(ev httpclient.Event, actor, result string) string {
	return strings.Join([]string{strconv.FormatUint(ev.Seq, 10), ev.At.Local().Format("2006-01-02T15:04:05Z07:00"), actor, ev.Type, ev.Subject, result}, " ")
}

// squeezed returns stdout's lines with every run of blanks made one space.
func squeezed(out string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return lines
}

// ensure that cluster events asks for the right pages and prints them newest first with local times and refusal details.
func TestClusterEvents(t *testing.T) {
	t.Parallel()
	evs := sampleEvents()
	rows := map[uint64]string{
		5: eventRow(evs[0], "alice", "ok"),
		4: eventRow(evs[1], "-", "ok"),
		3: eventRow(evs[2], "bob", "protected: the root admin cannot be deleted"),
		2: eventRow(evs[3], "-", "ok"),
		1: eventRow(evs[4], "alice", "exists: already exists really"),
	}
	cases := map[string]struct {
		args  []string
		lines []string
		seqs  []uint64
		more  string // expected hint on stderr
	}{
		"newest_page":     {lines: []string{"GET /v1/cluster/events?limit=50"}, seqs: []uint64{5, 3, 2, 1}},
		"short_page":      {args: []string{"--limit", "2"}, lines: []string{"GET /v1/cluster/events?limit=2"}, seqs: []uint64{5, 3}, more: "older events remain: repeat with --before 3, or use --all"},
		"older_page":      {args: []string{"--before", "3", "--limit", "2"}, lines: []string{"GET /v1/cluster/events?before=3&limit=2"}, seqs: []uint64{2, 1}},
		"with_heartbeats": {args: []string{"--heartbeats", "--limit", "2"}, lines: []string{"GET /v1/cluster/events?heartbeats=true&limit=2"}, seqs: []uint64{5, 4}, more: "--before 4"},
		"all_pages":       {args: []string{"--all", "--limit", "2"}, lines: []string{"GET /v1/cluster/events?limit=2", "GET /v1/cluster/events?before=3&limit=2"}, seqs: []uint64{5, 3, 2, 1}},
		"all_from_before": {args: []string{"--all", "--limit", "1", "--before", "3", "--heartbeats"}, lines: []string{"GET /v1/cluster/events?before=3&heartbeats=true&limit=1", "GET /v1/cluster/events?before=2&heartbeats=true&limit=1"}, seqs: []uint64{2, 1}},
		"all_big_pages":   {args: []string{"--all"}, lines: []string{"GET /v1/cluster/events?limit=1000"}, seqs: []uint64{5, 3, 2, 1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAdmin(t)
			f.set(func(f *fakeAdmin) { f.events = evs })
			r := runCLI(t, cliOpts{}, append(append([]string{"cluster", "events", "-s", f.url()}, asRoot...), tc.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			want := []string{"SEQ TIME ACTOR TYPE SUBJECT RESULT"}
			for _, s := range tc.seqs {
				want = append(want, rows[s])
			}
			if got := squeezed(r.stdout); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("table\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if (tc.more == "") != !strings.Contains(r.stderr, "older events remain") || !strings.Contains(r.stderr, tc.more) {
				t.Fatalf("stderr %q, want hint %q", r.stderr, tc.more)
			}
			var lines []string
			for _, req := range f.requests() {
				lines = append(lines, req.line)
				if basicUser(req) != "admin" || !strings.HasPrefix(req.header.Get("X-Narad-Client"), "narad-cli/") {
					t.Fatalf("request without credentials or client header: %+v", req)
				}
			}
			if strings.Join(lines, "\n") != strings.Join(tc.lines, "\n") {
				t.Fatalf("requests %q, want %q", lines, tc.lines)
			}
		})
	}
}

// ensure that --json prints the page object, and with --all every event and next_before 0.
func TestClusterEventsJSON(t *testing.T) {
	t.Parallel()
	f := newFakeAdmin(t)
	evs := sampleEvents()
	f.set(func(f *fakeAdmin) { f.events = evs })
	for args, want := range map[string]struct {
		n    int
		next uint64
	}{"--limit=2": {2, 3}, "--all": {4, 0}} {
		r := runCLI(t, cliOpts{}, append([]string{"cluster", "events", "--json", args, "-s", f.url()}, asRoot...)...)
		var page httpclient.EventPage
		if err := json.Unmarshal([]byte(r.stdout), &page); err != nil || len(page.Events) != want.n || page.NextBefore != want.next {
			t.Fatalf("%s: %v %+v\n%s", args, err, page, r.stdout)
		}
		if !page.Events[0].At.Equal(evs[0].At) || page.Events[0].Actor != "alice" {
			t.Fatalf("%s: first event %+v", args, page.Events[0])
		}
	}
}

// ensure that bad flags are usage errors sent nowhere, and refusals and a page loop are failures.
func TestClusterEventsErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		args  []string
		creds []string
		stuck uint64
		code  int
		msg   string
	}{
		"limit_zero":      {args: []string{"--limit", "0"}, code: 2, msg: "--limit must be 1 to 1000 (got 0)"},
		"limit_too_big":   {args: []string{"--limit", "1001"}, code: 2, msg: "--limit must be 1 to 1000"},
		"limit_not_int":   {args: []string{"--limit", "many"}, code: 2, msg: "invalid argument"},
		"before_negative": {args: []string{"--before", "-1"}, code: 2, msg: "invalid argument"},
		"extra_argument":  {args: []string{"now"}, code: 2, msg: "needs 0 argument(s)"},
		"not_admin":       {creds: asAlice, code: 1, msg: "narad: http 403: admin privileges required"},
		"pages_loop":      {args: []string{"--all", "--limit", "1"}, stuck: 5, code: 1, msg: "next_before 5 does not go below 5"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAdmin(t)
			f.set(func(f *fakeAdmin) { f.events, f.stuckNext = sampleEvents(), tc.stuck })
			creds := tc.creds
			if creds == nil {
				creds = asRoot
			}
			r := runCLI(t, cliOpts{}, append(append([]string{"cluster", "events", "-s", f.url()}, creds...), tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
				t.Fatalf("exit %d stderr %q, want %d %q", r.code, r.stderr, tc.code, tc.msg)
			}
			if n := len(f.requests()); tc.code == 2 && n != 0 {
				t.Fatalf("a refused command sent %d request(s)", n)
			}
		})
	}
}

// ensure that cluster members prints status, Raft role, partitions and heartbeat age, or JSON.
func TestClusterMembers(t *testing.T) {
	t.Parallel()
	f := newFakeAdmin(t)
	members := []httpclient.Member{
		{ID: "n1", Addr: "10.0.0.5:7942", Status: "alive", OwnedPartitions: 6, Voter: true, Leader: true, HeartbeatAgeSeconds: 1},
		{ID: "n2", Addr: "10.0.0.6:7942", Status: "alive", Draining: true, OwnedPartitions: 2, OutboundMoves: 2, Voter: true, HeartbeatAgeSeconds: 3},
		{ID: "n3", Addr: "10.0.0.7:7942", Status: "dead", HeartbeatAgeSeconds: 45},
	}
	f.set(func(f *fakeAdmin) { f.members = members })
	r := runCLI(t, cliOpts{}, append([]string{"cluster", "members", "-s", f.url()}, asRoot...)...)
	want := []string{
		"ID ADDR STATUS ROLE PARTITIONS HEARTBEAT",
		"n1 10.0.0.5:7942 alive leader 6 1s ago",
		"n2 10.0.0.6:7942 alive (draining) voter 2 (2 moving out) 3s ago",
		"n3 10.0.0.7:7942 dead non-voter 0 45s ago",
	}
	if got := squeezed(r.stdout); r.code != 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("exit %d table\n%s\nwant\n%s\n%s", r.code, strings.Join(got, "\n"), strings.Join(want, "\n"), r.stderr)
	}
	if reqs := f.requests(); len(reqs) != 1 || reqs[0].line != "GET /v1/cluster/members" {
		t.Fatalf("requests %+v", reqs)
	}
	r = runCLI(t, cliOpts{}, append([]string{"cluster", "members", "--json", "-s", f.url()}, asRoot...)...)
	var got []httpclient.Member
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 3 || !reflect.DeepEqual(got[1], members[1]) {
		t.Fatalf("json %v: %s", err, r.stdout)
	}
	if r := runCLI(t, cliOpts{}, append([]string{"cluster", "members", "-s", f.url()}, asAlice...)...); r.code != 1 || !strings.Contains(r.stderr, "http 403: admin privileges required") {
		t.Fatalf("non-admin: exit %d %s", r.code, r.stderr)
	}
}
