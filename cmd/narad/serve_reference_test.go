package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// ensure that the flags column of docs/configuration.md names exactly the
// flags `narad serve` has that set a key (--config and --help set none).
func TestReferenceDocNamesEveryServeFlag(t *testing.T) {
	raw, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	flag := regexp.MustCompile("`(--[a-z-]+)`")
	for _, line := range strings.Split(string(raw), "\n") {
		if cells := strings.Split(line, "|"); len(cells) >= 6 && strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			for _, m := range flag.FindAllStringSubmatch(cells[4], -1) {
				documented = append(documented, m[1])
			}
		}
	}
	var has []string
	newServeCmd(&env{}).Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "config" && f.Name != "help" {
			has = append(has, "--"+f.Name)
		}
	})
	slices.Sort(documented)
	slices.Sort(has)
	if !slices.Equal(documented, has) {
		t.Fatalf("the reference documents flags %v, serve has %v", documented, has)
	}
}
