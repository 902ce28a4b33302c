package bootstrap

import (
	"runtime/debug"
	"testing"
)

// ensure that link-time values win, a plain go build in a checkout reports
// its pseudo-version and revision (issue 17), and nothing reports "dev"/"unknown".
func TestBuildFromResolvesVersionAndCommit(t *testing.T) {
	stamped := &debug.BuildInfo{
		Main: debug.Module{Version: "v0.0.0-20261204164649-8bb894c742f7"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "8bb894c742f7a40b43ea8e4bf1b5956e4c0c1524"},
			{Key: "vcs.modified", Value: "false"},
		},
	}
	dirty := &debug.BuildInfo{
		Main:     debug.Module{Version: "v0.0.0-20261204164649-8bb894c742f7+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "8bb894c"}, {Key: "vcs.modified", Value: "true"}},
	}
	unstamped := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
	cases := []struct {
		name                string
		linkVer, linkCommit string
		info                *debug.BuildInfo
		wantVer, wantCommit string
	}{
		{"link-time values win", "v1.2.0", "abc123", stamped, "v1.2.0", "abc123"},
		{"plain go build in a checkout", "", "", stamped, "v0.0.0-20261204164649-8bb894c742f7", "8bb894c742f7a40b43ea8e4bf1b5956e4c0c1524"},
		{"modified work tree", "", "", dirty, "v0.0.0-20261204164649-8bb894c742f7+dirty", "8bb894c-dirty"},
		{"no VCS stamp", "", "", unstamped, "dev", "unknown"},
		{"no build info", "", "", nil, "dev", "unknown"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := buildFrom(c.linkVer, c.linkCommit, c.info)
			if got.Version != c.wantVer || got.Commit != c.wantCommit {
				t.Fatalf("buildFrom = %s / %s, want %s / %s", got.Version, got.Commit, c.wantVer, c.wantCommit)
			}
		})
	}
}
