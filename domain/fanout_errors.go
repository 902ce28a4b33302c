package domain

import "errors"

// Fan-out cursor outcomes (internals.md §6.5).
var (
	// ErrCursorCorrupt: a fan-out cursor file that fails its checksum (after
	// re-reads) or does not parse. Its position is lost: the cursor replays
	// from the attach point, never anchors at the tail.
	ErrCursorCorrupt = errors.New("domain: fan-out cursor file corrupt")
	// ErrPartitionDirGone: the parent partition's directory is missing or
	// now belongs to another incarnation of the topic; nothing was written.
	ErrPartitionDirGone = errors.New("domain: partition directory gone")
)
