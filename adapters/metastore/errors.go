package metastore

import "errors"

var (
	// ErrEntryNotApplicable: an entry reached Update that this build cannot
	// apply (unknown format version or entry type, corrupt bytes), or its
	// apply could not be written. Update returns it and dragonboat halts the
	// process (fail-stop): skipping the entry would let replicas diverge.
	// The entry is not counted applied, so a restart meets it again.
	ErrEntryNotApplicable = errors.New("metastore: entry cannot be applied; replica stops")
	// ErrCorruptSnapshot: a snapshot stream failed its framing or checksum.
	ErrCorruptSnapshot = errors.New("metastore: corrupt snapshot")
	// ErrStaleState: the state machine holds applied entries but Raft has no
	// state, and this node would bootstrap: starting would serve views no
	// log backs (or skip entries of a new log). Restore the Raft directory,
	// or start join-only to set the old state aside.
	ErrStaleState = errors.New("metastore: state machine holds data without Raft state")
	// ErrBadConfig: the configuration cannot start a replica.
	ErrBadConfig = errors.New("metastore: bad configuration")
)

// ErrNewerDatabase: the state machine's database, or a snapshot offered to
// it, applied an entry type this build does not know (internals §8.3). It
// is refused at open and at install: upgrade the binary. Rolling a node back
// below a release whose types the cluster already used is unsupported.
var ErrNewerDatabase = errors.New("metastore: database from a newer release")
