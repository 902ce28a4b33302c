package vfs

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
)

var (
	syncRingOnce sync.Once
	syncRing     *ring
	syncRingErr  error
)

// sharedRing is the process's fsync ring, set up on first use; nil when
// the kernel refused it.
func sharedRing() *ring {
	syncRingOnce.Do(func() { syncRing, syncRingErr = newRing(uringEntriesCount) })
	return syncRing
}

// SyncMethod says how this process makes file data durable: "io_uring", or
// "fdatasync" with the reason io_uring is not in use.
func SyncMethod() string {
	if r := sharedRing(); r != nil && !r.isDown() {
		return "io_uring"
	}
	if syncRingErr != nil {
		return "fdatasync (io_uring: " + syncRingErr.Error() + ")"
	}
	return "fdatasync (io_uring failed and was turned off)"
}

// fdatasync makes f's data durable: by the system call when no other sync
// is in flight and the runtime has processors to spare, else through the
// shared ring when there is one and it has room (syncOverlapping). f's
// descriptor is held for the whole sync (a Close meanwhile closes it only
// after the sync), so a kernel worker never syncs a descriptor number
// closed and reused.
func fdatasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	cerr := rc.Control(func(fd uintptr) {
		if r := sharedRing(); r != nil {
			serr = syncOverlapping(r, fd)
			return
		}
		serr = fdatasyncFD(fd)
	})
	if cerr != nil { // the file was closed
		return &os.PathError{Op: "sync", Path: f.Name(), Err: os.ErrClosed}
	}
	return serr
}

// syncsInFlight counts the process's fdatasyncs in progress on either
// path.
var syncsInFlight atomic.Int32

// syncOverlapping syncs fd by the system call when it is the only sync in
// flight and the runtime has more than one processor, else through r. A
// lone sync is what a quiet node makes (one produce at a time: one WAL
// sync, one segment sync), and there the ring costs about twice the CPU
// of the system call and twice the thread switches (BenchmarkFdatasync:
// a kernel worker does the flush and its completion travels through the
// poller), while a thread blocked in the system call costs nothing as
// long as another processor runs the other goroutines. With one processor
// (GOMAXPROCS=1, as in a one-CPU container) the blocked thread holds the
// only one until the runtime's monitor hands it away, 20 µs to 10 ms
// later: three nodes with GOMAXPROCS=1 on two cores fell from 12,900 to
// 4,500 msg/s that way (e2e TestBenchPairs). Overlapping syncs are what a
// busy node makes, where a blocked thread does get its processor handed
// to another thread, and the ring avoids that churn (doc.go).
func syncOverlapping(r ringSyncer, fd uintptr) error {
	n := syncsInFlight.Add(1)
	defer syncsInFlight.Add(-1)
	if syncDirectly(n, runtime.GOMAXPROCS(0)) {
		return fdatasyncFD(fd)
	}
	return syncThrough(r, fd)
}

// syncDirectly says whether a sync that makes inFlight syncs in flight
// goes by the system call on a runtime with procs processors.
func syncDirectly(inFlight int32, procs int) bool {
	return inFlight == 1 && procs > 1
}

// ringSyncer is what syncThrough needs of a ring (a seam for tests).
type ringSyncer interface {
	fdatasync(fd uintptr) error
	turnOff()
}

// syncThrough syncs f through r, falling back to the system call when r
// cannot take the request or a kernel worker could not run it (EAGAIN,
// EINTR; ECANCELED, which io-wq answers for a request it never started,
// as when it cannot create a worker thread under a pids or RLIMIT_NPROC
// limit: no I/O error was reported, so nothing is lost by asking again).
// A ring that answers EINVAL where the system call succeeds (a kernel
// without some part of what the ring asks for) is turned off. An I/O error
// is returned as it is and never retried: the kernel reports it once.
func syncThrough(r ringSyncer, fd uintptr) error {
	err := r.fdatasync(fd)
	switch {
	case errors.Is(err, errRingDown), errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR),
		errors.Is(err, syscall.ECANCELED):
		return fdatasyncFD(fd)
	case errors.Is(err, syscall.EINVAL):
		if derr := fdatasyncFD(fd); derr != nil {
			return derr
		}
		r.turnOff()
		return nil
	}
	return err
}

func fdatasyncFD(fd uintptr) error {
	for {
		err := syscall.Fdatasync(int(fd))
		if err != syscall.EINTR {
			return err
		}
	}
}
