package bootstrap

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// ensure that docs/security.md lists every audit event the code records
// (the ports.Audit* constants naming events) and names only NARAD_*
// variables the configuration reference lists, so the page cannot drift
// from the code (issue 17).
func TestSecurityDocMatchesTheCode(t *testing.T) {
	doc := readDoc(t, "security.md")
	for _, ev := range auditEvents(t) {
		if !strings.Contains(doc, "`"+ev+"`") {
			t.Errorf("docs/security.md does not list the audit event %q", ev)
		}
	}
	config := readDoc(t, "configuration.md")
	for _, v := range regexp.MustCompile(`NARAD_[A-Z_]+[A-Z]`).FindAllString(doc, -1) {
		if !strings.Contains(config, "`"+v+"`") {
			t.Errorf("docs/security.md names %s, which docs/configuration.md does not list", v)
		}
	}
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// auditEvents reads the event names out of ports/audit.go: the string
// constants named Audit* whose value is dotted ("user.create"); outcomes
// ("ok", "refused") carry no dot.
func auditEvents(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "ports", "audit.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range vs.Names {
			if i >= len(vs.Values) || !strings.HasPrefix(name.Name, "Audit") {
				continue
			}
			lit, ok := vs.Values[i].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				continue
			}
			if v, err := strconv.Unquote(lit.Value); err == nil && strings.Contains(v, ".") {
				events = append(events, v)
			}
		}
		return true
	})
	if len(events) < 10 {
		t.Fatalf("read only %d audit events from ports/audit.go: %v", len(events), events)
	}
	return events
}
