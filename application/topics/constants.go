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
	// redriveIDBytes is the random length of a redrive job id (16 hex).
	redriveIDBytes = 8
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

// Asking other owners, for describe's statistics and the children
// listing's lag (api.md §2.7, §2.11; internals.md §6.6: 16 concurrent).
const (
	// ownerAnswerTimeout is how long one owner's answer is waited for.
	ownerAnswerTimeout = 2 * time.Second
	// ownersAskedInFlight bounds the owners asked at once.
	ownersAskedInFlight = 16
)
