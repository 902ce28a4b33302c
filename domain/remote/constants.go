package remote

import "time"

// Every bound of the send path, from internals.md §7.2 and §7.3 and
// api.md §5.8 and §2.13.1. Units are in the names (durations carry theirs
// in the type).
const (
	// Chunks (internals.md §7.2 "Chunks").
	ChunkMaxMessagesCapable = 1000      // messages per request to a v3.2 target
	ChunkMaxMessagesLegacy  = 100       // messages per request to an older target
	ChunkStartBytes         = 960 << 10 // request body cap a lane starts with
	ChunkMinBytes           = 64 << 10  // the cap never shrinks below this
	ChunkGrowAfterAccepted  = 20        // accepted requests in a row that double the cap
	// ProbeMessages is the size of the capability probe: one more than a
	// legacy target takes.
	ProbeMessages = ChunkMaxMessagesLegacy + 1

	// Slabs (internals.md §7.2 "Commit and advance").
	SlabMaxRecordsPerLane = 500
	SlabMaxBytesPerLane   = 1 << 20 // key + payload bytes

	// Compression (internals.md §7.2 "Compression").
	CompressMinSavingPercent = 10

	// Gate (internals.md §7.2 "Gate").
	GateTransientFailuresToClose = 3 // unavailable answers in a row across lanes
	GateBackoffStart             = 250 * time.Millisecond
	GateBackoffMax               = 30 * time.Second
	GateAuthFailedWait           = 30 * time.Second // auth_failed waits this at once
	GateRetryAfterMax            = 60 * time.Second // a 429's Retry-After is capped here

	// One lane's backoff after an isolated unavailable (internals.md §7.2).
	LaneBackoffStart = 250 * time.Millisecond
	LaneBackoffMax   = 2 * time.Second

	// StallRetryWait paces a stalled cursor's retries, e.g. after a 403
	// (internals.md §7.3, api.md §5.8).
	StallRetryWait = 30 * time.Second
)

// The HTTP statuses the classifier and the status mapping name.
const (
	statusAccepted           = 202
	statusBadRequest         = 400
	statusUnauthorized       = 401
	statusForbidden          = 403
	statusNotFound           = 404
	statusRequestTimeout     = 408
	statusConflict           = 409
	statusPreconditionFailed = 412
	statusTooLarge           = 413
	statusUnsupportedMedia   = 415
	statusTooManyRequests    = 429
	statusBadGateway         = 502
	statusServiceUnavailable = 503
)
