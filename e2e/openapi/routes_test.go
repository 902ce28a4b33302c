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

// notServedYet are routes the server registers only as placeholders of
// remote replication (api.md §2.10.2, §2.12.1, §2.18: 403, 412 or 501,
// nothing stored). They stay out of the document until the remote plane
// is built; the list must name exactly the registered ones.
var notServedYet = map[string]bool{
	"POST /v1/remotes":                                true,
	"GET /v1/remotes":                                 true,
	"GET /v1/remotes/{name}":                          true,
	"PATCH /v1/remotes/{name}":                        true,
	"DELETE /v1/remotes/{name}":                       true,
	"POST /v1/remotes/{name}/test":                    true,
	"POST /v1/cluster/reencrypt-remotes":              true,
	"POST /v1/topics/{topic}/children/{child}/pause":  true,
	"POST /v1/topics/{topic}/children/{child}/resume": true,
	"POST /v1/topics/{topic}/children/{child}/skip":   true,
}

var (
	// routeLiteral is one registration: the method, the path literal and,
	// for a path built by concatenation, the variable appended to it.
	routeLiteral = regexp.MustCompile(`Method:\s*http\.Method(\w+),\s*Path:\s*"([^"]*)"(?:\s*\+\s*(\w+))?`)
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

// rangeValues resolves a path suffix variable bound by
// `for _, name := range []string{"a", "b"}` in the same file.
func rangeValues(t *testing.T, file, src, name string) []string {
	t.Helper()
	re := regexp.MustCompile(`for _, ` + regexp.QuoteMeta(name) + ` := range \[\]string\{([^}]*)\}`)
	m := re.FindStringSubmatch(src)
	if m == nil {
		t.Fatalf("%s builds a route path with %s, which this test cannot resolve", file, name)
	}
	var out []string
	for _, q := range regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(m[1], -1) {
		out = append(out, q[1])
	}
	return out
}

// ensure that every route the server registers is in docs/openapi.yaml,
// except the remote-replication placeholders, which must not be.
func TestServedRoutesAreDocumented(t *testing.T) {
	s := loadSpec(t)
	served := servedRoutes(t)
	var missing []string
	for r := range served {
		_, documented := s.ops[r]
		switch {
		case notServedYet[r] && documented:
			t.Errorf("%s is documented but still a placeholder; drop it from notServedYet once it is served", r)
		case !notServedYet[r] && !documented:
			missing = append(missing, r)
		}
	}
	sort.Strings(missing)
	for _, r := range missing {
		t.Errorf("the server registers %s, which docs/openapi.yaml does not describe", r)
	}
	for r := range notServedYet {
		if !served[r] {
			t.Errorf("notServedYet names %s, which the server no longer registers", r)
		}
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
