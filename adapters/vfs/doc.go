// Package vfs is the filesystem seam under the WAL and the segment log. Code
// that owns files uses vfs.FS, never package os, so that tests can run the
// same code on a crashable in-memory filesystem (MemFS: unsynced writes and
// unsynced directory entries are lost on Crash) and inject failures at any
// write, fsync, rename or truncate (Inject), or flip bits and tear tails.
//
// On Linux, a File.Sync that overlaps another sync in flight submits its
// fdatasync to a process-wide io_uring (uring_linux.go) and parks until the
// completion arrives through the runtime's network poller, falling back to
// the system call when io_uring is refused (an old kernel, a seccomp policy
// such as Docker's default, or kernel.io_uring_disabled), when the ring is
// full, or when the ring reports it cannot run the request. Same
// durability, same errors: an I/O error is returned once and never
// retried. Why: a goroutine blocked in fdatasync holds a thread, so while
// other goroutines wait to run the runtime hands its processor to another
// thread and its monitor keeps polling to do so; on the 2-core development
// VM, where a thread switch costs tens of microseconds, that churn was
// about a third of a three-node cluster's CPU, and the ring cut node CPU
// per message by a quarter to a third under the three-node bench. A lone
// sync, as a quiet node makes them, goes by the system call when the
// runtime has more than one processor: another processor runs the other
// goroutines meanwhile, and the ring would cost the sync twice the CPU (a
// kernel worker does the flush; BenchmarkFdatasync, goroutines=1: 68
// against 139 µs of process CPU per sync, 5 against 10 thread switches).
// With GOMAXPROCS=1 every sync goes through the ring: a thread blocked in
// the system call would hold the only processor. SyncMethod says whether
// the ring is in use; the WAL logs it at start.
package vfs
