package bootstrap

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set at link time: go build -ldflags "-X github.com/narad/narad/bootstrap.version=v0.1.0 -X ...commit=abc".
var (
	version = ""
	commit  = ""
)

// versionUnknown is what a build without a link-time version or a VCS stamp
// reports.
const versionUnknown = "dev"

// BuildInfo describes this binary.
type BuildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"go_version"`
}

// Build returns the binary's version, commit and Go version. Link-time values
// win; a plain `go build` in a git checkout falls back to the stamp the go
// command records (the module's pseudo-version and vcs.revision).
func Build() BuildInfo {
	info, _ := debug.ReadBuildInfo()
	return buildFrom(version, commit, info)
}

// buildFrom resolves the version and commit from link-time values, then from
// the build info's VCS stamp; a modified work tree marks the commit -dirty.
func buildFrom(linkVersion, linkCommit string, info *debug.BuildInfo) BuildInfo {
	b := BuildInfo{Version: linkVersion, Commit: linkCommit, GoVersion: runtime.Version()}
	if info != nil {
		if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		if b.Commit == "" {
			b.Commit = vcsCommit(info.Settings)
		}
	}
	if b.Version == "" {
		b.Version = versionUnknown
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

func vcsCommit(settings []debug.BuildSetting) string {
	var rev string
	dirty := false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "-dirty"
	}
	return rev
}

func (b BuildInfo) String() string {
	return fmt.Sprintf("narad %s (commit %s, %s)", b.Version, b.Commit, b.GoVersion)
}
