package openapi

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// routerDir holds the client API's handlers; each route group registers
// its routes there as Route{Method: http.MethodX, Path: "..."} literals.
const routerDir = repoRoot + "/adapters/httpapi"

var (
	// routeLiteral is one registration: the method, the path literal and,
	// for a path built by concatenation, the variable (or variable.field)
	// appended to it.
	routeLiteral = regexp.MustCompile(`Method:\s*http\.Method(\w+),\s*Path:\s*"([^"]*)"(?:\s*\+\s*(\w+(?:\.\w+)?))?`)
	// methodField counts registrations however they are written, so that a
	// shape routeLiteral misses fails the test instead of going unseen.
	methodField = regexp.MustCompile(`Method:\s*http\.Method\w+`)
	// unkeyedRoute is a Route literal without field names.
	unkeyedRoute = regexp.MustCompile(`Route\{\s*http\.Method`)
	ginParam     = regexp.MustCompile(`[:*]([A-Za-z_][A-Za-z0-9_]*)`)
)

// servedRoutes parses the route registrations out of the router's Go
// source (tests excluded), as "METHOD /path/{param}" keys.
func servedRoutes(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(routerDir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := string(raw)
		if unkeyedRoute.MatchString(src) {
			t.Fatalf("%s registers a Route without field names; write Method: and Path: so this test can read it", f)
		}
		found := routeLiteral.FindAllStringSubmatch(src, -1)
		if n := len(methodField.FindAllString(src, -1)); n != len(found) {
			t.Fatalf("%s has %d Method: fields but %d routes this test can read; teach routeLiteral the new shape", f, n, len(found))
		}
		for _, m := range found {
			suffixes := []string{""}
			if m[3] != "" {
				suffixes = rangeValues(t, f, src, m[3])
			}
			for _, s := range suffixes {
				routes[strings.ToUpper(m[1])+" "+ginParam.ReplaceAllString(m[2]+s, "{$1}")] = true
			}
		}
	}
	if len(routes) < 20 {
		t.Fatalf("read only %d routes from %s: the registrations changed shape", len(routes), routerDir)
	}
	return routes
}

// rangeValues resolves a path suffix bound by a range over a literal in
// the same file: a variable of `for _, name := range []string{"a", "b"}`,
// or a string field of `for _, name := range []struct{ f string; ... }{{"a",
// ...}, ...}` used as name.f.
func rangeValues(t *testing.T, file, src, suffix string) []string {
	t.Helper()
	name, field, isField := strings.Cut(suffix, ".")
	quoted := regexp.MustCompile(`"([^"]*)"`)
	if !isField {
		re := regexp.MustCompile(`for _, ` + regexp.QuoteMeta(name) + ` := range \[\]string\{([^}]*)\}`)
		m := re.FindStringSubmatch(src)
		if m == nil {
			t.Fatalf("%s builds a route path with %s, which this test cannot resolve", file, suffix)
		}
		var out []string
		for _, q := range quoted.FindAllStringSubmatch(m[1], -1) {
			out = append(out, q[1])
		}
		return out
	}
	re := regexp.MustCompile(`for _, ` + regexp.QuoteMeta(name) + ` := range \[\]struct\s*\{([^}]*)\}\{((?:\s*\{[^{}]*\},?)+)\s*\}`)
	m := re.FindStringSubmatch(src)
	if m == nil {
		t.Fatalf("%s builds a route path with %s, which this test cannot resolve", file, suffix)
	}
	index, i := -1, 0
	for _, f := range strings.FieldsFunc(m[1], func(r rune) bool { return r == '\n' || r == ';' }) {
		fs := strings.Fields(f)
		if len(fs) == 0 {
			continue
		}
		if len(fs) == 2 && fs[0] == field && fs[1] == "string" {
			index = i
		}
		i++
	}
	var out []string
	for _, elem := range regexp.MustCompile(`\{([^{}]*)\}`).FindAllStringSubmatch(m[2], -1) {
		parts := strings.Split(elem[1], ",")
		if index < 0 || index >= len(parts) {
			t.Fatalf("%s builds a route path with %s, which this test cannot resolve", file, suffix)
		}
		q := quoted.FindStringSubmatch(parts[index])
		if q == nil {
			t.Fatalf("%s builds a route path with %s from a value that is not a string literal", file, suffix)
		}
		out = append(out, q[1])
	}
	return out
}

// ensure that every route the server registers is in docs/openapi.yaml.
func TestServedRoutesAreDocumented(t *testing.T) {
	s := loadSpec(t)
	var missing []string
	for r := range servedRoutes(t) {
		if _, documented := s.ops[r]; !documented {
			missing = append(missing, r)
		}
	}
	sort.Strings(missing)
	for _, r := range missing {
		t.Errorf("the server registers %s, which docs/openapi.yaml does not describe", r)
	}
}

// ensure that docs/openapi.yaml describes no route the server does not
// register.
func TestDocumentedRoutesAreServed(t *testing.T) {
	s := loadSpec(t)
	served := servedRoutes(t)
	for _, op := range s.operations() {
		if !served[op] {
			t.Errorf("docs/openapi.yaml describes %s, which the server does not register", op)
		}
	}
}
