package leaderconfirm

import "time"

// confirmTimeout bounds one confirmation or latch barrier (the spec's 5 s
// leader read).
const confirmTimeout = 5 * time.Second
