//go:build linux

package telemetry

import (
	"fmt"
	"syscall"
)

// diskUsage returns the bytes used and the bytes available to an
// unprivileged writer on the filesystem holding dir.
func diskUsage(dir string) (used, avail uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, fmt.Errorf("telemetry: statfs %s: %w", dir, err)
	}
	bs := uint64(st.Bsize)
	return (st.Blocks - st.Bfree) * bs, st.Bavail * bs, nil
}
