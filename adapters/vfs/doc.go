// Package vfs is the filesystem seam under the WAL and the segment log. Code
// that owns files uses vfs.FS, never package os, so that tests can run the
// same code on a crashable in-memory filesystem (MemFS: unsynced writes and
// unsynced directory entries are lost on Crash) and inject failures at any
// write, fsync, rename or truncate (Inject), or flip bits and tear tails.
package vfs
