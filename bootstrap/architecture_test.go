package bootstrap

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// modulePath is the module's import path, the prefix of every package of ours.
const modulePath = "github.com/narad/narad"

// ring says what the non-test files of one top-level folder may import.
type ring struct {
	own        []string // our package prefixes it may import
	thirdParty bool     // whether it may import modules outside the standard library
}

// rings is the import table of docs/architecture.md.
var rings = map[string]ring{
	"domain":      {own: []string{"domain"}},
	"ports":       {own: []string{"domain", "ports"}},
	"application": {own: []string{"domain", "ports", "application"}},
	"adapters":    {own: []string{"domain", "ports", "adapters"}, thirdParty: true},
	"bootstrap":   {own: []string{""}, thirdParty: true},
	"cmd":         {own: []string{"bootstrap", "domain", "adapters/httpclient"}, thirdParty: true},
	"e2e":         {own: []string{"adapters/httpclient", "domain"}, thirdParty: true},
}

// transportAdapters may call use-case entry points in application/.
var transportAdapters = []string{"adapters/httpapi", "adapters/quicpeer"}

// onlyIn names third-party modules allowed in one ring alone (style rule 1).
var onlyIn = map[string][]string{
	"go.uber.org/fx":             {"bootstrap", "cmd"},
	"github.com/gin-gonic/gin":   {"adapters"},
	"github.com/quic-go/quic-go": {"adapters"},
}

// ensure that no import crosses the rings of architecture.md.
func TestImportsRespectRings(t *testing.T) {
	root := moduleRoot(t)
	for _, v := range importViolations(t, root) {
		t.Error(v)
	}
}

// ensure that the checker itself catches a crossing import (it cannot pass vacuously).
func TestImportCheckerCatchesViolations(t *testing.T) {
	cases := map[string]struct {
		dir, imp string
	}{
		"domain_imports_ports":        {"domain/meta", modulePath + "/ports"},
		"domain_imports_third_party":  {"domain", "github.com/klauspost/compress/zstd"},
		"application_imports_adapter": {"application/produce", modulePath + "/adapters/wal"},
		"ports_imports_application":   {"ports", modulePath + "/application/produce"},
		"adapter_imports_fx":          {"adapters/wal", "go.uber.org/fx"},
		"adapter_imports_use_case":    {"adapters/wal", modulePath + "/application/produce"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if checkImport(c.dir, c.imp) == "" {
				t.Fatalf("%s importing %s was allowed", c.dir, c.imp)
			}
		})
	}
	if v := checkImport("adapters/httpapi", modulePath+"/application/produce"); v != "" {
		t.Fatalf("transport adapter calling a use case was refused: %s", v)
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test")
		}
		dir = parent
	}
}

func importViolations(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			if v := checkImport(filepath.ToSlash(rel), imp); v != "" {
				out = append(out, filepath.ToSlash(path[len(root)+1:])+": "+v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkImport returns why package dir (relative to the module root) may not
// import imp, or "" when it may.
func checkImport(dir, imp string) string {
	top := strings.SplitN(dir, "/", 2)[0]
	r, ok := rings[top]
	if !ok {
		return "" // files outside the rings (tools) are not checked
	}
	if own, ok := strings.CutPrefix(imp, modulePath+"/"); ok {
		if allowedOwn(r, dir, own) {
			return ""
		}
		return "crosses the rings: " + dir + " may not import " + imp
	}
	if isStdlib(imp) {
		return ""
	}
	if !r.thirdParty {
		return dir + " may import only the standard library and inner rings, not " + imp
	}
	for mod, tops := range onlyIn {
		if (imp == mod || strings.HasPrefix(imp, mod+"/")) && !contains(tops, top) {
			return imp + " belongs in " + strings.Join(tops, " or ") + ", not in " + dir
		}
	}
	return ""
}

func allowedOwn(r ring, dir, own string) bool {
	for _, p := range r.own {
		if p == "" || own == p || strings.HasPrefix(own, p+"/") {
			return true
		}
	}
	if strings.HasPrefix(own, "application/") {
		for _, a := range transportAdapters {
			if dir == a || strings.HasPrefix(dir, a+"/") {
				return true
			}
		}
	}
	return false
}

func isStdlib(imp string) bool {
	first := strings.SplitN(imp, "/", 2)[0]
	return !strings.Contains(first, ".")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
