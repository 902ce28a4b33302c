package bootstrap

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set at link time: go build -ldflags "-X github.com/narad/narad/bootstrap.version=v0.1.0 -X ...commit=abc".
var (
	version = "dev"
	commit  = ""
)

// BuildInfo describes this binary.
type BuildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"go_version"`
}

// Build returns the binary's version, commit and Go version. Without a
// link-time commit it falls back to the VCS stamp of the build, if any.
func Build() BuildInfo {
	c := commit
	if c == "" {
		c = vcsRevision()
	}
	if c == "" {
		c = "unknown"
	}
	return BuildInfo{Version: version, Commit: c, GoVersion: runtime.Version()}
}

func (b BuildInfo) String() string {
	return fmt.Sprintf("narad %s (commit %s, %s)", b.Version, b.Commit, b.GoVersion)
}

func vcsRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return ""
}
