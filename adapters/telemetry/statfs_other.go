//go:build !linux

package telemetry

import "errors"

// errNoStatfs: this platform's build has no statfs reading; the data-dir
// gauges stay absent.
var errNoStatfs = errors.New("telemetry: statfs is only read on linux")

func diskUsage(string) (used, avail uint64, err error) { return 0, 0, errNoStatfs }
