package ports

import "github.com/narad/narad/domain"

// TopicDir is one directory under the data directory's topics/ (internals.md
// §4.1): a topic's directory, or a quarantined leftover of a deleted
// incarnation (Quarantine set; Topic and ID then come from its
// "<topic>.stale-<id>" name). Marker is the incarnation marker inside, empty
// when the directory has none.
type TopicDir struct {
	Dir        string // the entry's name under topics/
	Topic      string
	ID         domain.TopicID
	Marker     domain.TopicID
	Quarantine bool
	// Bytes is what a quarantined directory holds on disk (file sizes,
	// summed); zero for a topic's directory, which the listing does not
	// walk.
	Bytes int64
}

// TopicDirs lists and reclaims topic directories for the orphan sweep
// (internals.md §9.8). Safe for concurrent use with the partition logs.
type TopicDirs interface {
	// TopicDirs lists every directory under topics/.
	TopicDirs() ([]TopicDir, error)
	// ReclaimTopicDir deletes d, but only while it is still what the
	// listing saw: the marker unchanged and, for a topic's directory, no
	// log of it open. It answers domain.ErrConflict when d changed.
	// Destructive: callers confirm with the Raft leader first.
	ReclaimTopicDir(d TopicDir) error
}
