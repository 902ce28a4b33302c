package vfs

import (
	"errors"
	"path/filepath"
	"testing"
)

// ensure that a Faults rule fails exactly the matching call once, after its skips.
func TestFaultsFailNth(t *testing.T) {
	var faults Faults
	fsys := Inject(NewMem(), faults.Hook)
	must(t, fsys.MkdirAll("/d"))
	f, err := fsys.Create("/d/seg.log")
	must(t, err)
	faults.FailNth(OpWrite, "seg.log", 1)
	if _, err := f.WriteAt([]byte("a"), 0); err != nil {
		t.Fatalf("skipped write failed: %v", err)
	}
	if _, err := f.WriteAt([]byte("b"), 1); !errors.Is(err, ErrInjected) {
		t.Fatalf("armed write: %v", err)
	}
	if _, err := f.WriteAt([]byte("c"), 1); err != nil {
		t.Fatalf("rule fired twice: %v", err)
	}
	if faults.Fired() != 1 {
		t.Fatalf("Fired = %d", faults.Fired())
	}
}

// ensure that a lying sync reports success but leaves the data unsynced.
func TestFaultsLieOnSync(t *testing.T) {
	var faults Faults
	mem := NewMem()
	fsys := Inject(mem, faults.Hook)
	must(t, fsys.MkdirAll("/d"))
	f, err := fsys.Create("/d/a")
	must(t, err)
	must(t, fsys.SyncDir("/d"))
	write(t, f, "data", 0)
	faults.LieNext(OpSync, "/d/a")
	must(t, f.Sync())
	if got := contents(t, mem.Crash(CrashOptions{}), "/d/a"); got != "" {
		t.Fatalf("lying sync made %q durable", got)
	}
}

// ensure that the OS filesystem honours the same contract as MemFS for the calls the engines use.
func TestOSContract(t *testing.T) {
	dir := t.TempDir()
	var fsys FS = OS{}
	name := filepath.Join(dir, "sub", "a")
	must(t, fsys.MkdirAll(filepath.Dir(name)))
	f, err := fsys.Create(name)
	must(t, err)
	if _, err := fsys.Create(name); err == nil {
		t.Fatal("exclusive create of an existing file succeeded")
	}
	write(t, f, "hello world", 0)
	must(t, f.Sync())
	must(t, f.Truncate(5))
	if n, _ := f.Size(); n != 5 {
		t.Fatalf("size %d", n)
	}
	must(t, f.Close())
	must(t, fsys.SyncDir(filepath.Dir(name)))
	must(t, FlipBit(fsys, name, 0, 0))
	if got := contents(t, fsys, name); got != "iello" {
		t.Fatalf("after FlipBit %q", got)
	}
	must(t, Zero(fsys, name, 3, 2))
	must(t, Tear(fsys, name, 4))
	if got := contents(t, fsys, name); got != "iel\x00" {
		t.Fatalf("after Zero+Tear %q", got)
	}
	st, err := fsys.Stat(name)
	must(t, err)
	if st.Mode().Perm() != FileMode {
		t.Fatalf("mode %v, want %v", st.Mode().Perm(), FileMode)
	}
	names, err := fsys.List(filepath.Dir(name))
	must(t, err)
	if len(names) != 1 || names[0] != "a" {
		t.Fatalf("List = %v", names)
	}
}
