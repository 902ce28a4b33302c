package vfs

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"testing"
)

func write(t *testing.T, f File, data string, off int64) {
	t.Helper()
	if _, err := f.WriteAt([]byte(data), off); err != nil {
		t.Fatal(err)
	}
}

func contents(t *testing.T, fsys FS, name string) string {
	t.Helper()
	b, err := ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ensure that a crash keeps synced bytes and drops unsynced ones.
func TestMemCrashDropsUnsyncedData(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("/d"))
	f, err := m.Create("/d/a")
	must(t, err)
	write(t, f, "hello", 0)
	must(t, f.Sync())
	must(t, m.SyncDir("/d"))
	write(t, f, " world", 5)
	if got := contents(t, m.Crash(CrashOptions{}), "/d/a"); got != "hello" {
		t.Fatalf("after crash %q, want %q", got, "hello")
	}
	if got := contents(t, m, "/d/a"); got != "hello world" {
		t.Fatalf("live view changed by Crash: %q", got)
	}
}

// ensure that a file whose directory entry was never synced is gone after a crash.
func TestMemCrashDropsUnsyncedNames(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("/d"))
	f, err := m.Create("/d/a")
	must(t, err)
	write(t, f, "x", 0)
	must(t, f.Sync())
	if _, err := m.Crash(CrashOptions{}).Stat("/d/a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("unsynced name survived: %v", err)
	}
	must(t, m.SyncDir("/d"))
	if _, err := m.Crash(CrashOptions{}).Stat("/d/a"); err != nil {
		t.Fatalf("synced name lost: %v", err)
	}
}

// ensure that a rename is durable only after the directory sync (the atomic-replace protocol).
func TestMemRenameNeedsSyncDir(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("/d"))
	must(t, WriteFileAtomic(m, "/d/cp", []byte("v1")))
	f, err := m.Create("/d/cp.new")
	must(t, err)
	write(t, f, "v2", 0)
	must(t, f.Sync())
	must(t, m.Rename("/d/cp.new", "/d/cp"))
	if got := contents(t, m.Crash(CrashOptions{}), "/d/cp"); got != "v1" {
		t.Fatalf("before SyncDir crash shows %q, want v1", got)
	}
	must(t, m.SyncDir("/d"))
	if got := contents(t, m.Crash(CrashOptions{}), "/d/cp"); got != "v2" {
		t.Fatalf("after SyncDir crash shows %q, want v2", got)
	}
}

// ensure that a torn crash keeps a prefix of the unsynced appends and nothing else.
func TestMemCrashTornPrefix(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("/d"))
	f, err := m.Create("/d/a")
	must(t, err)
	must(t, m.SyncDir("/d"))
	write(t, f, "base", 0)
	must(t, f.Sync())
	write(t, f, "0123456789", 4)
	seen := map[int]bool{}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		got := contents(t, m.Crash(CrashOptions{Rand: r}), "/d/a")
		if !bytes.HasPrefix([]byte("base0123456789"), []byte(got)) || len(got) < 4 {
			t.Fatalf("torn image %q is not a prefix of the writes above the synced base", got)
		}
		seen[len(got)] = true
	}
	if len(seen) < 5 {
		t.Fatalf("torn crashes hardly vary: %v", seen)
	}
}

// ensure that an overwrite of synced bytes that was never synced does not survive.
func TestMemCrashUnsyncedOverwrite(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("/d"))
	f, err := m.Create("/d/a")
	must(t, err)
	must(t, m.SyncDir("/d"))
	write(t, f, "aaaa", 0)
	must(t, f.Sync())
	write(t, f, "bb", 1)
	if got := contents(t, m.Crash(CrashOptions{Rand: rand.New(rand.NewPCG(3, 4))}), "/d/a"); got != "aaaa" {
		t.Fatalf("got %q", got)
	}
	must(t, f.Truncate(2))
	must(t, f.Sync())
	if got := contents(t, m.Crash(CrashOptions{}), "/d/a"); got != "ab" {
		t.Fatalf("after synced truncate got %q", got)
	}
}

// ensure that renaming a directory moves everything below it, and List sees files and dirs.
func TestMemDirectoryRenameAndList(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("/t/x/p00000"))
	f, err := m.Create("/t/x/p00000/seg")
	must(t, err)
	write(t, f, "data", 0)
	must(t, m.Rename("/t/x", "/t/x.stale-1"))
	names, err := m.List("/t")
	must(t, err)
	if len(names) != 1 || names[0] != "x.stale-1" {
		t.Fatalf("List(/t) = %v", names)
	}
	if got := contents(t, m, "/t/x.stale-1/p00000/seg"); got != "data" {
		t.Fatalf("moved file holds %q", got)
	}
	if err := m.Remove("/t/x.stale-1"); err == nil {
		t.Fatal("removing a non-empty directory succeeded")
	}
	must(t, m.RemoveAll("/t/x.stale-1"))
	if _, err := m.Stat("/t/x.stale-1/p00000/seg"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("RemoveAll left %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
