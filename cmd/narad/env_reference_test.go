package main

import (
	"os"
	"strings"
	"testing"
)

// ensure that docs/configuration.md lists every variable the CLI and the
// process read (issue 17: the reference is checked against the code).
func TestReferenceDocListsTheCLIVariables(t *testing.T) {
	raw, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{envAddr, envUser, envPass, envConfigDir, quietSysmonEnvVar} {
		if !strings.Contains(string(raw), "| `"+v+"` |") {
			t.Errorf("%s is not in docs/configuration.md", v)
		}
	}
}
