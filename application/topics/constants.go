package topics

import "time"

// Spec constants (api.md §0.8, §2.5-2.9.1, §5.4; internals.md §8.1). Units
// are in the names.
const (
	// PartitionsMinCount is the fewest partitions a topic may have.
	PartitionsMinCount = 3
	// RetentionFloorMs is the shortest retention other than 0 (keep
	// forever).
	RetentionFloorMs = int64(3_600_000)
	// FanoutDelayMaxMs bounds a delay child's delay (one year).
	FanoutDelayMaxMs = int64(31_536_000_000)
	// ListLimitDefault and ListLimitMax bound one page of GET /v1/topics.
	ListLimitDefault = 100
	ListLimitMax     = 1000
	// SchemaVersionsMaxCount is the longest schema history.
	SchemaVersionsMaxCount = 1000
	// topicIDBytes is the random length of an incarnation id (16 hex).
	topicIDBytes = 8
	// attachEpochBytes is the random length of an attach epoch (16 hex,
	// internals.md §6.3).
	attachEpochBytes = 8
	// attachPointTimeout bounds one owner's answer for the attach point
	// (the node RPC's default reply deadline, internals.md §10.3).
	attachPointTimeout = 5 * time.Second
	// casAttempts is how often a compare-and-set entry is proposed before
	// the refusal becomes "topic changed since it was read".
	casAttempts = 2
	// retentionWatchBuffer is the RetentionSync subscription's buffer.
	retentionWatchBuffer = 256
	// retentionRetryDelay paces RetentionSync after a failed read.
	retentionRetryDelay = time.Second
)

// Describe placeholders (api.md §2.4, partition statistics object).
const (
	StatusOK               = "ok"
	StatusOwnerUnavailable = "owner_unavailable"
	LivenessDead           = "dead"
	LivenessUnreachable    = "unreachable"
	LivenessUnknown        = "unknown"
	LivenessUnassigned     = "unassigned"
)

// schemaAnnotations are the keywords whose changes register nothing
// (api.md §2.8, [v3.1]).
var schemaAnnotations = map[string]bool{
	"title": true, "description": true, "examples": true, "$comment": true,
	"default": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// Describe's remote statistics (api.md §2.7; internals.md §6.6, §10.4).
const (
	// describeOwnerTimeout is how long describe waits for one owner's
	// answer ("gives each owner 2 seconds").
	describeOwnerTimeout = 2 * time.Second
	// describeOwnersInFlight bounds the owners asked at once (describe
	// stats fan-out: 16 concurrent).
	describeOwnersInFlight = 16
)

// Children listing's lag (api.md §2.11; internals.md §6.6: the listing asks
// other owners like describe does).
const (
	// childrenOwnerTimeout is how long the listing waits for one owner's
	// cursor positions (describe's per-owner budget).
	childrenOwnerTimeout = 2 * time.Second
	// childrenOwnersInFlight bounds the owners asked at once (16, as for
	// describe's statistics).
	childrenOwnersInFlight = 16
)
