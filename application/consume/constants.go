package consume

import "time"

// Batch consume bounds (api.md §0.8, §2.14.3; internals.md §5.6).
const (
	BatchMaxMessages     = 100     // max of a batch consume, handles of a batch ack
	batchScanBytesMax    = 4 << 20 // keys+payloads reserved in one pass (the crossing record is kept)
	batchReplyBytesMax   = 8 << 20 // encoded envelopes in one answer (never fewer than one)
	envelopeOverheadMax  = 256     // bytes an envelope adds beyond its escaped topic, key and payload
	envelopeEscapeFactor = 6       // worst-case bytes per stored byte (\u00XX)
)

// Topic defaults applied when a record leaves a field at zero (api.md §2.4).
const (
	visibilityDefaultMs   = 30_000 // visibility_timeout_ms 0 = default
	maxInFlightDefault    = 1024   // max_in_flight_per_partition
	maxAckedAheadDefault  = 1024   // max_acked_ahead_per_partition
	consumeCapDefault     = 1024   // http.max_consume_in_flight_per_identity
	corruptSkipsPerSearch = 4096   // unreadable records skipped by one reservation attempt at most
)

// Offset committer cadences (internals.md §5.8, §5.11).
const (
	committerTickMax          = 100 * time.Millisecond // tick T (or D when shorter)
	DurabilityIntervalDefault = time.Second            // storage.consumer_offset_commit_interval_ms
	DurabilityIntervalMin     = 10 * time.Millisecond
	DurabilityIntervalMax     = 60 * time.Second
	offsetLevelInterval       = 30 * time.Second // consumer.offset levelled at most this often
	committerWarnInterval     = time.Minute      // each committer warning at most this often
)

// Waiting (internals.md §5.3-5.5).
const (
	PurgeIntervalDefault = time.Second           // the expiry purger
	routeCheckInterval   = 50 * time.Millisecond // re-check a waiting topic with no local partition
)

// NackDelayMax is the longest delay a nack may carry (api-extensions.md
// "Nack with a delay"): the delay is held like a lease, so it is
// bounded like SQS bounds a visibility change.
const NackDelayMax = 12 * time.Hour

// watchBufferCount is the metadata watch buffer of the delete watcher.
const watchBufferCount = 256

// Routing to other owners (internals.md §5.5, §5.11; api.md §2.15, §3.3).
const (
	reprobeIntervalMin = 100 * time.Millisecond // first pause between rounds of probes while waiting
	reprobeIntervalMax = time.Second            // the pause doubles up to this
	// ackNoAnswerMessage is the 502 of a forwarded ack, extend or nack.
	ackNoAnswerMessage = "the partition owner did not answer; the ack may have been applied; retry"
	// ackNotSentMessage is the 503 of a forwarded ack, extend or nack that
	// never left this node.
	ackNotSentMessage = "the ack did not reach the partition owner and was not applied; retry"
)

// Delivery tokens (internals.md §5.5, §5.11).
const (
	tokenTTLGrace          = 250 * time.Millisecond // a token outlives its consumer's wait by this
	tokenShareWindow       = 250 * time.Millisecond // consumers parking this soon after a registration share it
	tokenKeeperInterval    = 500 * time.Millisecond // the keeper checks every owner holds a live token
	tokenRefreshInterval   = 5 * time.Second        // and re-sends every registration at least this often
	tokenHoldDuration      = time.Second            // a notified record is held back this long for its claim
	gatewayReprobeInterval = 2 * time.Second        // a consumer parked on tokens still probes every owner this often
	legacyPeerMemory       = 2 * time.Minute        // an owner that refused a registration is polled this long
	// tokenRPCTimeout bounds one registration or notification (our choice:
	// the claim budget, well inside the hold).
	tokenRPCTimeout = 500 * time.Millisecond
	// tokenSpentMemory is how long the requester remembers a notification
	// spending a token, against a registration's reply still on its way
	// (a registration or a probe is answered within 500 ms or not at all).
	tokenSpentMemory = time.Second
	// tokenTTLMax clamps the TTL a node asks for (its wait is at most the
	// long-poll clamp plus grace), bounding how long the book keeps it.
	tokenTTLMax = time.Minute
	// pushAttempts bounds the TokenPush calls of one pushed record whose
	// answers were lost (ours: each under tokenRPCTimeout, 1.5 s in all).
	pushAttempts = 3
	// pushTakenMemory is how long a node remembers a pushed record one of
	// its consumers took, to answer a push sent again "taken" without
	// handing the record twice (ours: well past pushAttempts calls).
	pushTakenMemory = 5 * time.Second
)

// Dead letters (docs/api-extensions.md "Dead letters").
const (
	// receiveLogCompactBytes: a partition's receive log is rewritten to
	// its unsettled offsets once it grows past this.
	receiveLogCompactBytes = 256 << 10
	// deadLetterProduceTimeout bounds one write of a dead letter; it is
	// well under the visibility timeout the reservation holds.
	deadLetterProduceTimeout = 10 * time.Second
	// deadLetterRetryDelay holds a message back after its dead-letter
	// write failed, before the next attempt.
	deadLetterRetryDelay = 5 * time.Second
)
