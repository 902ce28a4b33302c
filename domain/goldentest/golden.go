package goldentest

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden scripts in testdata/ with the current output")

// Run plays every script matching pattern (e.g. "testdata/*.txt") through
// play, one subtest per file, and fails when play's output differs from the
// file; with -update it rewrites the file with the output instead.
func Run(t *testing.T, pattern string, play func(t *testing.T, script string) string) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts match %s: %v", pattern, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got := play(t, string(raw))
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != string(raw) {
				t.Fatalf("output differs from %s (run with -update after checking):\n%s", file, got)
			}
		})
	}
}
