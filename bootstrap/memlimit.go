package bootstrap

import (
	"bufio"
	"bytes"
	"path"
	"strconv"
	"strings"

	"go.uber.org/zap"
)

// memoryLimitPercent is the share of the cgroup memory limit a node gives
// the Go runtime as its soft memory limit when GOMEMLIMIT is unset
// (api.md §6.1).
const memoryLimitPercent = 90

// cgroupUnlimitedBytes: cgroup v1 reports "no limit" as a huge number
// (9223372036854771712 on 4 KiB pages); anything from here up is no limit.
const cgroupUnlimitedBytes = 1 << 62

// cgroupRoot is where the cgroup filesystems are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// memoryLimitEnv is what applyMemoryLimit needs of the process: its
// environment, the files under /proc and /sys, and the runtime's setter
// (debug.SetMemoryLimit).
type memoryLimitEnv struct {
	getenv   func(string) string
	readFile func(string) ([]byte, error)
	setLimit func(int64) int64
}

// applyMemoryLimit sets the Go soft memory limit to memoryLimitPercent of
// the process's cgroup memory limit when GOMEMLIMIT is unset and a limit
// exists, and logs it (api.md §6.1). It returns the limit set, 0 for none.
func applyMemoryLimit(env memoryLimitEnv, log *zap.Logger) int64 {
	if env.getenv("GOMEMLIMIT") != "" {
		return 0
	}
	cgroup, ok := cgroupMemoryLimit(env.readFile)
	if !ok {
		return 0
	}
	limit := cgroup / 100 * memoryLimitPercent
	env.setLimit(limit)
	log.Info("go memory limit set from the cgroup memory limit (set GOMEMLIMIT to override)",
		zap.Int64("cgroup_limit_bytes", cgroup), zap.Int64("go_limit_bytes", limit))
	return limit
}

// cgroupMemoryLimit returns the lowest memory limit on the process's cgroup
// path (its own and every ancestor's, cgroup v2 memory.max or v1
// memory.limit_in_bytes), or ok=false when none is set or none can be
// read. /proc/self/cgroup names the path; inside a container's cgroup
// namespace it is "/", the mount's root.
func cgroupMemoryLimit(read func(string) ([]byte, error)) (int64, bool) {
	data, err := read("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	best, found := int64(0), false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		dir, file, ok := memoryCgroup(sc.Text())
		if !ok {
			continue
		}
		for p := dir; ; p = path.Dir(p) {
			if limit, ok := readLimit(read, path.Join(p, file)); ok && (!found || limit < best) {
				best, found = limit, true
			}
			if p == "/" || p == "." || p == cgroupRoot || p == path.Join(cgroupRoot, "memory") {
				break
			}
		}
	}
	return best, found
}

// memoryCgroup maps one /proc/self/cgroup line to the directory of its
// memory controller and the limit file's name: "0::/a/b" (v2) or
// "4:memory:/a/b" (v1).
func memoryCgroup(line string) (dir, file string, ok bool) {
	parts := strings.SplitN(line, ":", 3)
	if len(parts) != 3 {
		return "", "", false
	}
	switch {
	case parts[0] == "0" && parts[1] == "":
		return path.Join(cgroupRoot, parts[2]), "memory.max", true
	case hasController(parts[1], "memory"):
		return path.Join(cgroupRoot, "memory", parts[2]), "memory.limit_in_bytes", true
	}
	return "", "", false
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// readLimit reads one limit file: a byte count, or "max" / a v1 "no
// limit" value (ok=false), or an unreadable file (ok=false).
func readLimit(read func(string) ([]byte, error), name string) (int64, bool) {
	data, err := read(name)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || n <= 0 || n >= cgroupUnlimitedBytes {
		return 0, false
	}
	return n, true
}
