package orphans

import "time"

// retryInterval paces passes after one that could not confirm every
// candidate (no leader, no quorum): the data stays until a pass can.
const retryInterval = 30 * time.Second

const (
	// purgeRetryInterval paces the purge of a deleted incarnation that a
	// pass could not finish (no leader, a directory that changed under it).
	purgeRetryInterval = 10 * time.Second
	// purgeResubscribeDelay paces watching again after a failed watch.
	purgeResubscribeDelay = time.Second
	// purgeWatchBuffer is the metadata watch buffer of the purger; falling
	// a whole buffer behind costs a rescan, nothing else.
	purgeWatchBuffer = 256
)
