package remote

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// specOrder reads a worst-first state list from a reference document: on
// the first line holding marker, from "`remote_missing`" on, every
// `name` outside parentheses.
func specOrder(t *testing.T, doc, marker string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "reference", doc))
	if err != nil {
		t.Fatal(err)
	}
	parens := regexp.MustCompile(`\([^)]*\)`)
	name := regexp.MustCompile("`([a-z_]+)`")
	for _, line := range strings.Split(string(raw), "\n") {
		i := strings.Index(line, "`remote_missing`")
		if !strings.Contains(line, marker) || i < 0 {
			continue
		}
		var out []string
		for _, m := range name.FindAllStringSubmatch(parens.ReplaceAllString(line[i:], ""), -1) {
			out = append(out, m[1])
		}
		return out
	}
	t.Fatalf("%s has no line holding %q", doc, marker)
	return nil
}

func stateNamesOf(states []State) []string {
	var out []string
	for _, s := range states {
		out = append(out, s.String())
	}
	return out
}

// ensure that the states are ordered exactly as internals.md §7.4 and
// api.md §5.8 list them, worst first.
func TestStatesFollowTheSpecOrder(t *testing.T) {
	got := stateNamesOf(AllStates())
	internals := specOrder(t, "internals.md", " › `running`")
	if !slices.Equal(got, internals) {
		t.Fatalf("states %v\ninternals.md §7.4 %v", got, internals)
	}
	api := specOrder(t, "api.md", "**Link states**, listed from worst to best")
	if !slices.Equal(got, api) {
		t.Fatalf("states %v\napi.md §5.8 %v", got, api)
	}
	for i, s := range AllStates() {
		if i > 0 && !AllStates()[i-1].Worse(s) {
			t.Fatalf("%s is not worse than %s", AllStates()[i-1], s)
		}
	}
}

// ensure that Worst picks the worst state, running for none, and reads an
// invalid state as unknown.
func TestWorst(t *testing.T) {
	cases := []struct {
		in   []State
		want State
	}{
		{nil, Running},
		{[]State{Running}, Running},
		{[]State{Running, Paused}, Paused},
		{[]State{Throttled, Unavailable, Running}, Unavailable},
		{[]State{Running, TLSFailed, RejectedRecord, Unknown}, TLSFailed},
		{[]State{Running, RemoteMissing, AuthFailed}, RemoteMissing},
		{[]State{Running, State(0)}, Unknown},
		{[]State{Paused, State(200)}, Unknown},
		{[]State{Forbidden, State(0)}, Forbidden},
	}
	for _, c := range cases {
		if got := Worst(c.in...); got != c.want {
			t.Errorf("Worst(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

// ensure that every state and class name parses back to itself and that
// nothing else parses.
func TestParseStateAndClass(t *testing.T) {
	for _, s := range AllStates() {
		if got, ok := ParseState(s.String()); !ok || got != s {
			t.Errorf("ParseState(%q) = %v, %v", s, got, ok)
		}
		if _, ok := ParseClass(s.String()); ok {
			t.Errorf("state %q parses as a class", s)
		}
	}
	for _, c := range AllClasses() {
		if got, ok := ParseClass(c.String()); !ok || got != c {
			t.Errorf("ParseClass(%q) = %v, %v", c, got, ok)
		}
		if _, ok := ParseState(c.String()); ok {
			t.Errorf("class %q parses as a state", c)
		}
	}
	for _, bad := range []string{"", "invalid", "Running", "running ", "ok"} {
		if _, ok := ParseState(bad); ok {
			t.Errorf("ParseState(%q) succeeded", bad)
		}
		if _, ok := ParseClass(bad); ok {
			t.Errorf("ParseClass(%q) succeeded", bad)
		}
	}
	if State(0).String() != "invalid" || Class(0).String() != "invalid" || State(0).Valid() {
		t.Fatal("the zero State or Class passes for a real one")
	}
	if len(AllStates()) != 19 || len(AllClasses()) != 11 {
		t.Fatalf("%d states, %d classes", len(AllStates()), len(AllClasses()))
	}
}

// ensure that every state and class maps to the status of
// internals.md §7.4 and api.md §5.8.
func TestHTTPStatus(t *testing.T) {
	want := map[string]int{
		"remote_missing":             412,
		"credential_unreadable":      412,
		"node_insecure":              412,
		"destination_refused":        409,
		"target_has_remote_children": 409,
		"target_replaced":            409,
		"auth_failed":                409,
		"forbidden":                  409,
		"target_missing":             409,
		"no_batch_produce":           409,
		"redirect_refused":           502,
		"tls_failed":                 409,
		"rejected_record":            409,
		"record_too_large":           409,
		"unavailable":                503,
		"throttled":                  429,
		"unknown":                    409,
		"paused":                     409,
		"running":                    409,
		"old_release":                412,
		"unreachable":                412,
		"stale":                      412,
		"target_disagreement":        412,
		"target_security_off":        409,
		"admin_credential":           409,
		"target_is_source":           409,
		"target_is_delay_child":      409,
		"target_is_stub":             409,
		"schema_mismatch":            409,
		"edge":                       502,
		"no_such_class":              409,
	}
	covered := 0
	for _, s := range AllStates() {
		if _, ok := want[s.String()]; ok {
			covered++
		}
	}
	for _, c := range AllClasses() {
		if _, ok := want[c.String()]; ok {
			covered++
		}
	}
	if covered != len(AllStates())+len(AllClasses()) {
		t.Fatalf("the table covers %d of %d states and classes", covered, len(AllStates())+len(AllClasses()))
	}
	for name, status := range want {
		if got := HTTPStatus(name); got != status {
			t.Errorf("HTTPStatus(%q) = %d, want %d", name, got, status)
		}
	}
}

// The states needing a fix are exactly those worse than unavailable.
func TestNeedsFix(t *testing.T) {
	for _, s := range AllStates() {
		want := s != Unavailable && s != Throttled && s != Unknown && s != Paused && s != Running
		if s.NeedsFix() != want {
			t.Errorf("%s: NeedsFix %v", s, s.NeedsFix())
		}
	}
	if State(0).NeedsFix() {
		t.Error("the zero state needs a fix")
	}
}
