package ports

import "github.com/narad/narad/domain"

// FanoutCursor is the persisted position of one fan-out cursor: the link's
// attach epoch it belongs to and the next parent offset to copy.
type FanoutCursor struct {
	Epoch      string
	NextOffset int64
}

// FanoutCursors persists fan-out cursors, one per (parent partition, child),
// beside the parent partition's log (internals.md §6.5). It never creates a
// partition directory and never writes into a directory of another
// incarnation than parent.TopicID (an empty id skips that check).
//
// Calls on one (parent, child) must not overlap (the engine runs one cursor
// per file); calls on different files may run concurrently. A reader racing
// the writer (a stats handler, a move listing) is safe: Load re-reads a
// record caught mid-write before declaring it corrupt.
type FanoutCursors interface {
	// Load reads the cursor of child on parent. ok is false when there is no
	// file, or the directory is missing or another incarnation's. Errors:
	// domain.ErrCursorCorrupt (the file exists but holds no valid record),
	// domain.ErrInvalidRecord (bad ref or child name), or an I/O error.
	Load(parent domain.PartitionRef, child string) (c FanoutCursor, ok bool, err error)
	// Store persists c durably before returning: the first record (or one
	// replacing an older format) through a temp file, rename and directory
	// sync, later ones in place. Errors: domain.ErrPartitionDirGone (nothing
	// written: the cursor must stop), domain.ErrInvalidRecord, or an I/O
	// error (the previous record is intact or the new one is whole).
	Store(parent domain.PartitionRef, child string, c FanoutCursor) error
	// Remove deletes the cursor file; an absent one is not an error.
	// Destructive: the caller has the Raft leader's confirmation.
	Remove(parent domain.PartitionRef, child string) error
	// Children lists, sorted, the children with a cursor file on parent
	// (none when the directory is missing or another incarnation's).
	Children(parent domain.PartitionRef) ([]string, error)
}
