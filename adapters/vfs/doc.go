// Package vfs is the filesystem seam under the WAL and the segment log. Code
// that owns files uses vfs.FS, never package os, so that tests can run the
// same code on a crashable in-memory filesystem (MemFS: unsynced writes and
// unsynced directory entries are lost on Crash) and inject failures at any
// write, fsync, rename or truncate (Inject), or flip bits and tear tails.
//
// On Linux, File.Sync submits its fdatasync to a process-wide io_uring
// (uring_linux.go) and parks until the completion arrives through the
// runtime's network poller, falling back to the system call when io_uring
// is refused (an old kernel, a seccomp policy such as Docker's default, or
// kernel.io_uring_disabled), when the ring is full, or when the ring
// reports it cannot run the request. Same durability, same errors: an I/O
// error is returned once and never retried. Why: a goroutine blocked in
// fdatasync holds a thread, so the runtime hands its processor to another
// thread and its monitor keeps polling to do so; on the 2-core development
// VM, where a thread switch costs tens of microseconds, that churn was
// about a third of a three-node cluster's CPU. Alone, a sync through the
// ring costs more than the system call (BenchmarkFdatasync: a kernel
// worker does the flush); under the three-node bench it cut node CPU per
// message by a quarter to a third. SyncMethod says which path a process
// uses; the WAL logs it at start.
package vfs
