package shipping

import "time"

// Pacing of the send path (internals.md §7.2, §7.5).
const (
	// pollInterval is how often a waiting cursor re-reads its link (a
	// pause lifted, a skip recorded, the remote changed).
	pollInterval = time.Second
	// checkRetryMax bounds the wait before re-running a check that errored.
	checkRetryMax = 30 * time.Second
	// checkJitterPercent spreads the periodic checks (±20 %).
	checkJitterPercent = 20
	// probeSlotsExtra are the connections of checks and probes beside the
	// record requests' slots.
	probeSlotsExtra = 4
	// unavailableLogEvery bounds the warnings of an unavailable or
	// throttled link: one a minute per cursor.
	unavailableLogEvery = time.Minute
)
