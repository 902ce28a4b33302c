package metastore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

const (
	failStopDirEnv = "NARAD_METASTORE_FAILSTOP_DIR"
	goodIndexLine  = "GOOD_INDEX="
)

// Ensure that an entry this build cannot apply stops the node (fail-stop)
// with a clear error instead of being skipped: the process exits non-zero
// naming the entry, the entry is not counted applied, and a restart meets
// it again and stops again. Runs the node in a child process, since
// dragonboat halts the whole process.
func TestFailStopOnEntryFromNewerBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	out, err := runFailStopChild(t, dir)
	if err == nil {
		t.Fatalf("the node kept running after an entry it cannot apply:\n%s", out)
	}
	for _, want := range []string{"metastore: entry cannot be applied; replica stops", "meta: unknown event format version", "entry type"} {
		if !strings.Contains(out, want) {
			t.Fatalf("child output lacks %q:\n%s", want, tail(out))
		}
	}
	if os.Getenv("NARAD_SHOW_CHILD") != "" {
		t.Log(tail(out))
	}
	good := goodIndex(t, out)
	if got := appliedIndexOnDisk(t, dir); got != good {
		t.Fatalf("applied index on disk %d, want %d (the bad entry must not count as applied)", got, good)
	}
	out, err = runFailStopChild(t, dir) // restart: replays the bad entry, stops again
	if err == nil || !strings.Contains(out, "metastore: entry cannot be applied") {
		t.Fatalf("restart did not stop again (err %v):\n%s", err, tail(out))
	}
	if got := appliedIndexOnDisk(t, dir); got != good {
		t.Fatalf("after restart applied index %d, want %d", got, good)
	}
}

func runFailStopChild(t *testing.T, dir string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFailStopChild$", "-test.v")
	cmd.Env = append(os.Environ(), failStopDirEnv+"="+dir, "NARAD_TEST_LOG=1")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return buf.String(), err
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("child did not stop within 60 s:\n%s", tail(buf.String()))
		return "", nil
	}
}

// TestFailStopChild is the child's body: a single node that applies one
// good entry, then receives bytes of a newer format version.
func TestFailStopChild(t *testing.T) {
	dir := os.Getenv(failStopDirEnv)
	if dir == "" {
		t.Skip("child process of TestFailStopOnEntryFromNewerBuild")
	}
	addrFile := filepath.Join(dir, "addr")
	addr := freeAddr(t)
	if b, err := os.ReadFile(addrFile); err == nil {
		addr = string(b)
	} else if err := os.WriteFile(addrFile, []byte(addr), 0o644); err != nil {
		t.Fatal(err)
	}
	n := startNode(t, "solo", addr, filepath.Join(dir, "node"), StoreConfig{})
	leaderOf(t, n)
	if n.store.AppliedIndex() == 0 {
		got := mustPropose(t, n.store, createTopic("good", 1))
		fmt.Printf("%s%d\n", goodIndexLine, got.Index)
		bad := append([]byte{9, 1}, []byte(`{"actor":"","at_ms":0,"d":{}}`)...)
		_, err := n.host.nh.SyncPropose(ctxFor(t, 5*time.Second), n.store.session, bad)
		t.Fatalf("proposal of a newer-format entry returned (%v); the node should have stopped", err)
	}
	fmt.Printf("%s%d\n", goodIndexLine, n.store.AppliedIndex())
	time.Sleep(30 * time.Second) // replay must stop the process before this ends
	t.Fatal("restarted node kept running over an entry it cannot apply")
}

func goodIndex(t *testing.T, out string) uint64 {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, goodIndexLine); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	t.Fatalf("child never applied the good entry:\n%s", tail(out))
	return 0
}

func appliedIndexOnDisk(t *testing.T, dir string) uint64 {
	t.Helper()
	files := newDBFiles(filepath.Join(dir, "node", "fsm", "shard-1"), testLogger())
	db, err := files.openCurrent()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	index, err := readAppliedIndex(db)
	if err != nil && !errors.Is(err, pebble.ErrNotFound) {
		t.Fatal(err)
	}
	return index
}

func tail(s string) string {
	if len(s) > 4000 {
		return "..." + s[len(s)-4000:]
	}
	return s
}
