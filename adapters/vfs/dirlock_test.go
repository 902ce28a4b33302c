package vfs

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ensure that a second lock on a held data directory fails with
// ErrDirLocked and succeeds once the first is released.
func TestLockDirIsExclusive(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	first, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockDir(dir); !errors.Is(err, ErrDirLocked) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second lock: %v, want ErrDirLocked naming %s", err, dir)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := LockDir(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	again.Release()
}

// ensure that the lock holds against another process, not only another
// open file of this one (flock is per open file description).
func TestLockDirHeldAgainstAnotherProcess(t *testing.T) {
	if os.Getenv("NARAD_VFS_LOCK_CHILD") != "" {
		_, err := LockDir(os.Getenv("NARAD_VFS_LOCK_CHILD"))
		if errors.Is(err, ErrDirLocked) {
			os.Exit(3)
		}
		os.Exit(0)
	}
	dir := t.TempDir()
	l, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockDirHeldAgainstAnotherProcess$")
	cmd.Env = append(os.Environ(), "NARAD_VFS_LOCK_CHILD="+dir)
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("child locking a held directory: %v, want exit 3 (ErrDirLocked)", err)
	}
}
