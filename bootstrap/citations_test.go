package bootstrap

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// citation is a reference to a section of the design reference in the
// code: "api.md §2.17", "internals.md §11.5".
var citation = regexp.MustCompile(`\b(api|internals)\.md §(\d+(?:\.\d+)*)`)

// ensure that every section of docs/reference/api.md and internals.md the
// code cites exists there, so a reader of the repository alone can follow
// each citation.
func TestCitationsResolve(t *testing.T) {
	sections := map[string]map[string]bool{}
	for _, doc := range []string{"api", "internals"} {
		raw, err := os.ReadFile(filepath.Join("..", "docs", "reference", doc+".md"))
		if err != nil {
			t.Fatal(err)
		}
		sections[doc] = headings(string(raw))
	}
	missing := map[string][]string{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range citation.FindAllStringSubmatch(string(b), -1) {
			if !sections[m[1]][m[2]] {
				missing[m[0]] = append(missing[m[0]], path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for cite, files := range missing {
		t.Errorf("%s is cited (%s) but docs/reference has no such section", cite, files[0])
	}
}

// heading matches a section heading: "## 11. Rebalance", "### 11.5 Flip".
var heading = regexp.MustCompile(`(?m)^#{2,5} (\d+(?:\.\d+)*)\.? `)

// headings lists a document's numbered sections; a cited section is found
// when it or a subsection of it is a heading.
func headings(doc string) map[string]bool {
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(doc, -1) {
		n := m[1]
		for {
			out[n] = true
			i := strings.LastIndexByte(n, '.')
			if i < 0 {
				break
			}
			n = n[:i]
		}
	}
	return out
}
