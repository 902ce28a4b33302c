package vfs

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// MemFS is a strict in-memory filesystem for crash tests. A file's data is
// durable only up to its last Sync; a name (create, rename, remove) is durable
// only after SyncDir of its directory. Crash returns what a machine crash
// would leave. Directories are durable once made.
type MemFS struct {
	mu      sync.Mutex
	live    map[string]*memNode
	durable map[string]*memNode
	dirs    map[string]bool
}

type memNode struct {
	data       []byte
	synced     []byte
	dirtyBelow bool // a write or truncate touched the synced prefix since the last sync
	modTime    time.Time
}

// NewMem returns an empty MemFS.
func NewMem() *MemFS {
	return &MemFS{live: map[string]*memNode{}, durable: map[string]*memNode{}, dirs: map[string]bool{"/": true, ".": true}}
}

var _ FS = (*MemFS)(nil)

// CrashOptions says how much unsynced data survives a crash.
type CrashOptions struct {
	// Rand, when set, keeps a random prefix of each file's unsynced appended
	// bytes (a torn tail). Nil keeps exactly the synced bytes.
	Rand *rand.Rand
}

// Crash returns the filesystem a machine crash would leave now: durable names
// only, each file with its synced data (plus a torn prefix of unsynced
// appends when opts.Rand is set). The receiver is unchanged.
func (m *MemFS) Crash(opts CrashOptions) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := NewMem()
	for d := range m.dirs {
		out.dirs[d] = true
	}
	paths := make([]string, 0, len(m.durable))
	for p := range m.durable {
		paths = append(paths, p)
	}
	sort.Strings(paths) // deterministic use of opts.Rand
	for _, p := range paths {
		n := m.durable[p]
		data := bytes.Clone(n.synced)
		if data == nil {
			data = []byte{}
		}
		if opts.Rand != nil && !n.dirtyBelow && len(n.data) > len(n.synced) {
			extra := opts.Rand.IntN(len(n.data) - len(n.synced) + 1)
			data = append(data, n.data[len(n.synced):len(n.synced)+extra]...)
		}
		node := &memNode{data: data, synced: bytes.Clone(data), modTime: n.modTime}
		out.live[p] = node
		out.durable[p] = node
	}
	return out
}

func clean(name string) string { return filepath.Clean(name) }

func (m *MemFS) parentExists(name string) error {
	if !m.dirs[filepath.Dir(name)] {
		return &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return nil
}

func (m *MemFS) Create(name string) (File, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.parentExists(name); err != nil {
		return nil, err
	}
	if _, ok := m.live[name]; ok || m.dirs[name] {
		return nil, &fs.PathError{Op: "create", Path: name, Err: fs.ErrExist}
	}
	n := &memNode{modTime: time.Now()}
	m.live[name] = n
	return &memFile{fs: m, node: n, name: name}, nil
}

func (m *MemFS) open(name string, writable bool) (File, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.live[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &memFile{fs: m, node: n, name: name, readOnly: !writable}, nil
}

func (m *MemFS) OpenRW(name string) (File, error) { return m.open(name, true) }
func (m *MemFS) Open(name string) (File, error)   { return m.open(name, false) }

func (m *MemFS) Remove(name string) error {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.live[name]; ok {
		delete(m.live, name)
		return nil
	}
	if m.dirs[name] {
		prefix := name + string(filepath.Separator)
		for p := range m.live {
			if strings.HasPrefix(p, prefix) {
				return &fs.PathError{Op: "remove", Path: name, Err: fmt.Errorf("directory not empty")}
			}
		}
		for d := range m.dirs {
			if strings.HasPrefix(d, prefix) {
				return &fs.PathError{Op: "remove", Path: name, Err: fmt.Errorf("directory not empty")}
			}
		}
		delete(m.dirs, name)
		return nil
	}
	return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
}

// RemoveAll removes name and everything below it; the removal of files is
// durable at once (a simplification: purges are not crash-tested here).
func (m *MemFS) RemoveAll(name string) error {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	prefix := name + string(filepath.Separator)
	for _, table := range []map[string]*memNode{m.live, m.durable} {
		for p := range table {
			if p == name || strings.HasPrefix(p, prefix) {
				delete(table, p)
			}
		}
	}
	for d := range m.dirs {
		if d == name || strings.HasPrefix(d, prefix) {
			delete(m.dirs, d)
		}
	}
	return nil
}

// Rename moves a file, or a directory with everything below it. For a
// directory the move is durable at once; for a file, after SyncDir.
func (m *MemFS) Rename(oldname, newname string) error {
	oldname, newname = clean(oldname), clean(newname)
	m.mu.Lock()
	defer m.mu.Unlock()
	if n, ok := m.live[oldname]; ok {
		if err := m.parentExists(newname); err != nil {
			return err
		}
		delete(m.live, oldname)
		m.live[newname] = n
		return nil
	}
	if !m.dirs[oldname] {
		return &fs.PathError{Op: "rename", Path: oldname, Err: fs.ErrNotExist}
	}
	if m.dirs[newname] {
		return &fs.PathError{Op: "rename", Path: newname, Err: fs.ErrExist}
	}
	m.renameTree(oldname, newname)
	return nil
}

func (m *MemFS) renameTree(oldname, newname string) {
	prefix := oldname + string(filepath.Separator)
	move := func(p string) (string, bool) {
		if p == oldname {
			return newname, true
		}
		if strings.HasPrefix(p, prefix) {
			return newname + p[len(oldname):], true
		}
		return "", false
	}
	for _, table := range []map[string]*memNode{m.live, m.durable} {
		for p, n := range table {
			if np, ok := move(p); ok {
				delete(table, p)
				table[np] = n
			}
		}
	}
	for d := range m.dirs {
		if nd, ok := move(d); ok {
			delete(m.dirs, d)
			m.dirs[nd] = true
		}
	}
}

func (m *MemFS) MkdirAll(dir string) error {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	for d := dir; !m.dirs[d]; d = filepath.Dir(d) {
		if _, ok := m.live[d]; ok {
			return &fs.PathError{Op: "mkdir", Path: d, Err: fs.ErrExist}
		}
		m.dirs[d] = true
	}
	return nil
}

func (m *MemFS) List(dir string) ([]string, error) {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[dir] {
		return nil, &fs.PathError{Op: "readdir", Path: dir, Err: fs.ErrNotExist}
	}
	var names []string
	for p := range m.live {
		if filepath.Dir(p) == dir {
			names = append(names, filepath.Base(p))
		}
	}
	for d := range m.dirs {
		if d != dir && filepath.Dir(d) == dir {
			names = append(names, filepath.Base(d))
		}
	}
	sort.Strings(names)
	return names, nil
}

func (m *MemFS) Stat(name string) (fs.FileInfo, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if n, ok := m.live[name]; ok {
		return memInfo{name: filepath.Base(name), size: int64(len(n.data)), mod: n.modTime}, nil
	}
	if m.dirs[name] {
		return memInfo{name: filepath.Base(name), dir: true}, nil
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

func (m *MemFS) SyncDir(dir string) error {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[dir] {
		return &fs.PathError{Op: "syncdir", Path: dir, Err: fs.ErrNotExist}
	}
	for p := range m.durable {
		if filepath.Dir(p) == dir {
			delete(m.durable, p)
		}
	}
	for p, n := range m.live {
		if filepath.Dir(p) == dir {
			m.durable[p] = n
		}
	}
	return nil
}

type memInfo struct {
	name string
	size int64
	mod  time.Time
	dir  bool
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) ModTime() time.Time { return i.mod }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | DirMode
	}
	return FileMode
}

type memFile struct {
	fs       *MemFS
	node     *memNode
	name     string
	readOnly bool
	closed   bool
}

func (f *memFile) check(write bool) error {
	if f.closed {
		return fs.ErrClosed
	}
	if write && f.readOnly {
		return &fs.PathError{Op: "write", Path: f.name, Err: fs.ErrPermission}
	}
	return nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check(false); err != nil {
		return 0, err
	}
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check(true); err != nil {
		return 0, err
	}
	n := f.node
	if end := off + int64(len(p)); end > int64(len(n.data)) {
		if end > int64(cap(n.data)) {
			grown := make([]byte, len(n.data), max(end, int64(2*cap(n.data))))
			copy(grown, n.data)
			n.data = grown
		}
		n.data = n.data[:end]
	}
	copy(n.data[off:], p)
	if off < int64(len(n.synced)) {
		n.dirtyBelow = true
	}
	n.modTime = time.Now()
	return len(p), nil
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check(false); err != nil {
		return err
	}
	n := f.node
	if n.dirtyBelow || len(n.data) < len(n.synced) {
		n.synced = bytes.Clone(n.data)
	} else {
		n.synced = append(n.synced, n.data[len(n.synced):]...)
	}
	n.dirtyBelow = false
	return nil
}

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check(true); err != nil {
		return err
	}
	n := f.node
	if size <= int64(len(n.data)) {
		n.data = n.data[:size]
	} else {
		n.data = append(n.data, make([]byte, size-int64(len(n.data)))...)
	}
	if size < int64(len(n.synced)) {
		n.dirtyBelow = true
	}
	n.modTime = time.Now()
	return nil
}

func (f *memFile) Size() (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check(false); err != nil {
		return 0, err
	}
	return int64(len(f.node.data)), nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return fs.ErrClosed
	}
	f.closed = true
	return nil
}

func (f *memFile) Name() string { return f.name }
