package vfs

import (
	"errors"
	"io/fs"
	"strings"
	"sync"
)

// Op names a filesystem operation a fault can target.
type Op int

const (
	OpCreate Op = iota
	OpOpen
	OpWrite
	OpRead
	OpSync
	OpTruncate
	OpRename
	OpRemove
	OpSyncDir
	OpMkdir
	OpList
	OpStat
)

var (
	// ErrInjected is the error an injected fault returns.
	ErrInjected = errors.New("vfs: injected failure")
	// ErrLie, returned by a hook for OpSync or OpSyncDir, makes the call
	// report success without syncing: a lying disk.
	ErrLie = errors.New("vfs: lie about sync")
)

// Hook decides the outcome of one operation on name: nil to proceed, ErrLie
// to skip a sync while reporting success, anything else to fail with it.
type Hook func(op Op, name string) error

// Inject wraps fsys so every operation first asks hook.
func Inject(fsys FS, hook Hook) FS { return &injectFS{fs: fsys, hook: hook} }

type injectFS struct {
	fs   FS
	hook Hook
}

func (i *injectFS) ask(op Op, name string) error {
	err := i.hook(op, name)
	if err == nil || errors.Is(err, ErrLie) {
		return err
	}
	return &fs.PathError{Op: opNames[op], Path: name, Err: err}
}

var opNames = map[Op]string{
	OpCreate: "create", OpOpen: "open", OpWrite: "write", OpRead: "read", OpSync: "sync",
	OpTruncate: "truncate", OpRename: "rename", OpRemove: "remove", OpSyncDir: "syncdir",
	OpMkdir: "mkdir", OpList: "list", OpStat: "stat",
}

func (i *injectFS) wrap(f File, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	return &injectFile{File: f, fs: i}, nil
}

func (i *injectFS) Create(name string) (File, error) {
	if err := i.ask(OpCreate, name); err != nil {
		return nil, err
	}
	return i.wrap(i.fs.Create(name))
}

func (i *injectFS) OpenRW(name string) (File, error) {
	if err := i.ask(OpOpen, name); err != nil {
		return nil, err
	}
	return i.wrap(i.fs.OpenRW(name))
}

func (i *injectFS) Open(name string) (File, error) {
	if err := i.ask(OpOpen, name); err != nil {
		return nil, err
	}
	return i.wrap(i.fs.Open(name))
}

func (i *injectFS) Remove(name string) error {
	if err := i.ask(OpRemove, name); err != nil {
		return err
	}
	return i.fs.Remove(name)
}

func (i *injectFS) RemoveAll(name string) error {
	if err := i.ask(OpRemove, name); err != nil {
		return err
	}
	return i.fs.RemoveAll(name)
}

func (i *injectFS) Rename(oldname, newname string) error {
	if err := i.ask(OpRename, oldname); err != nil {
		return err
	}
	return i.fs.Rename(oldname, newname)
}

func (i *injectFS) MkdirAll(dir string) error {
	if err := i.ask(OpMkdir, dir); err != nil {
		return err
	}
	return i.fs.MkdirAll(dir)
}

func (i *injectFS) List(dir string) ([]string, error) {
	if err := i.ask(OpList, dir); err != nil {
		return nil, err
	}
	return i.fs.List(dir)
}

func (i *injectFS) Stat(name string) (fs.FileInfo, error) {
	if err := i.ask(OpStat, name); err != nil {
		return nil, err
	}
	return i.fs.Stat(name)
}

func (i *injectFS) SyncDir(dir string) error {
	switch err := i.ask(OpSyncDir, dir); {
	case errors.Is(err, ErrLie):
		return nil
	case err != nil:
		return err
	}
	return i.fs.SyncDir(dir)
}

type injectFile struct {
	File
	fs *injectFS
}

func (f *injectFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.ask(OpRead, f.Name()); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *injectFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.ask(OpWrite, f.Name()); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *injectFile) Sync() error {
	switch err := f.fs.ask(OpSync, f.Name()); {
	case errors.Is(err, ErrLie):
		return nil
	case err != nil:
		return err
	}
	return f.File.Sync()
}

func (f *injectFile) Truncate(size int64) error {
	if err := f.fs.ask(OpTruncate, f.Name()); err != nil {
		return err
	}
	return f.File.Truncate(size)
}

// Faults is a ready-made Hook: a list of armed rules, each firing once.
type Faults struct {
	mu    sync.Mutex
	rules []rule
	fired int
}

type rule struct {
	op     Op
	substr string
	skip   int
	err    error
}

// FailNext makes the next op on a name containing substr fail.
func (f *Faults) FailNext(op Op, substr string) { f.FailNth(op, substr, 0) }

// FailNth lets skip matching ops through, then fails the next one.
func (f *Faults) FailNth(op Op, substr string, skip int) {
	f.arm(rule{op: op, substr: substr, skip: skip, err: ErrInjected})
}

// LieNext makes the next sync (OpSync or OpSyncDir) on a matching name report
// success without syncing.
func (f *Faults) LieNext(op Op, substr string) {
	f.arm(rule{op: op, substr: substr, err: ErrLie})
}

func (f *Faults) arm(r rule) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, r)
}

// Fired reports how many rules have fired.
func (f *Faults) Fired() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fired
}

// Hook is the Faults' Hook, for Inject.
func (f *Faults) Hook(op Op, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.rules {
		r := &f.rules[i]
		if r.op != op || !strings.Contains(name, r.substr) {
			continue
		}
		if r.skip > 0 {
			r.skip--
			continue
		}
		err := r.err
		f.rules = append(f.rules[:i], f.rules[i+1:]...)
		f.fired++
		return err
	}
	return nil
}
