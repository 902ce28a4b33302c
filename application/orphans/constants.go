package orphans

import "time"

// retryInterval paces passes after one that could not confirm every
// candidate (no leader, no quorum): the data stays until a pass can.
const retryInterval = 30 * time.Second
