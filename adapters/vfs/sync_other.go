//go:build !linux

package vfs

import "os"

func fdatasync(f *os.File) error { return f.Sync() }

// SyncMethod says how this process makes file data durable.
func SyncMethod() string { return "fsync" }
