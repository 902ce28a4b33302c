package bootstrap

import (
	"io/fs"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// files is a fake /proc and /sys.
type files map[string]string

func (f files) read(name string) ([]byte, error) {
	if s, ok := f[name]; ok {
		return []byte(s), nil
	}
	return nil, fs.ErrNotExist
}

// ensure that the cgroup memory limit is found for cgroup v2 and v1, in a
// container's namespace ("/") and on a nested path where an ancestor's
// limit is the lower one, and that "max", v1's "no limit" and missing or
// garbled files mean no limit.
func TestCgroupMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files files
		want  int64
	}{
		{"v2 container root", files{"/proc/self/cgroup": "0::/\n", "/sys/fs/cgroup/memory.max": "2147483648\n"}, 2147483648},
		{"v2 max", files{"/proc/self/cgroup": "0::/\n", "/sys/fs/cgroup/memory.max": "max\n"}, 0},
		{"v2 nested, parent lower", files{"/proc/self/cgroup": "0::/a/b\n",
			"/sys/fs/cgroup/a/b/memory.max": "4000000000", "/sys/fs/cgroup/a/memory.max": "1000000000"}, 1000000000},
		{"v1 limited", files{"/proc/self/cgroup": "5:cpu,cpuacct:/x\n4:memory:/x\n", "/sys/fs/cgroup/memory/x/memory.limit_in_bytes": "536870912"}, 536870912},
		{"v1 unlimited", files{"/proc/self/cgroup": "4:memory:/x\n", "/sys/fs/cgroup/memory/x/memory.limit_in_bytes": "9223372036854771712",
			"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712"}, 0},
		{"garbled", files{"/proc/self/cgroup": "0::/\n", "/sys/fs/cgroup/memory.max": "lots"}, 0},
		{"no limit files", files{"/proc/self/cgroup": "0::/a\n"}, 0},
		{"no /proc", files{}, 0},
	} {
		got, ok := cgroupMemoryLimit(tc.files.read)
		if got != tc.want || ok != (tc.want > 0) {
			t.Errorf("%s: got %d, %v; want %d", tc.name, got, ok, tc.want)
		}
	}
}

// ensure that a node under a cgroup limit sets the Go limit to 90% of it
// and logs the spec's line, and that GOMEMLIMIT, when set, wins.
func TestApplyMemoryLimit(t *testing.T) {
	limited := files{"/proc/self/cgroup": "0::/\n", "/sys/fs/cgroup/memory.max": "1000000000"}
	for _, tc := range []struct {
		name   string
		env    map[string]string
		want   int64
		logged int
	}{
		{"cgroup limit", nil, 900000000, 1},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "512MiB"}, 0, 0},
	} {
		core, logs := observer.New(zap.InfoLevel)
		var set int64
		got := applyMemoryLimit(memoryLimitEnv{
			getenv:   func(k string) string { return tc.env[k] },
			readFile: limited.read,
			setLimit: func(n int64) int64 { set = n; return 0 },
		}, zap.New(core))
		if got != tc.want || set != tc.want {
			t.Errorf("%s: applied %d (setter got %d), want %d", tc.name, got, set, tc.want)
		}
		msgs := logs.FilterMessage("go memory limit set from the cgroup memory limit (set GOMEMLIMIT to override)").Len()
		if msgs != tc.logged {
			t.Errorf("%s: %d log lines, want %d", tc.name, msgs, tc.logged)
		}
	}
}
