// Package partdir holds the rules that adapters keeping files beside a
// partition's log (offsetstore, receivelog, cursorfile) share about the
// partition directories adapters/segmentlog lays out: the path of a ref's
// directory, which refs are valid, and whether a directory belongs to a
// ref's topic incarnation. It reads over vfs.FS and never writes.
package partdir
