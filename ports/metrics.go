package ports

import "time"

// Metrics records what the produce and consume paths did (api.md §7). Every
// method is cheap and safe for concurrent use; an implementation never
// blocks and never fails. Partition is the partition index.
type Metrics interface {
	// MessagesProduced counts records committed on their owner.
	MessagesProduced(topic string, partition int32, records, payloadBytes int)
	// ProduceRejected counts produces refused before acceptance, by reason
	// (schema, delayed_child).
	ProduceRejected(topic, reason string)
	// MessagesConsumed counts messages handed to queue consumers (replays are
	// not counted; redeliveries are).
	MessagesConsumed(topic string, partition int32, records, payloadBytes int)
	// ConsumeWaited records one consume's time by outcome (hit, timeout,
	// cancelled, no_wait); an outcome other than hit also counts as empty.
	ConsumeWaited(topic, outcome string, waited time.Duration)
	// LeaseSettled counts extends ("extend") and nacks ("nack") per topic.
	LeaseSettled(topic, op string)
	// MessagesDeadLettered counts messages moved from topic to its
	// dead-letter topic (the origin's name).
	MessagesDeadLettered(topic string, n int)
	// DeadLetterFailed counts one failed write of a message to topic's
	// dead-letter topic (the origin's name); the message stays in its
	// origin and is tried again.
	DeadLetterFailed(topic string)
	// RedriveMoved counts dead letters a redrive job produced back from
	// dead-letter topic topic (docs/api-extensions.md "Redrive").
	RedriveMoved(topic string, n int)
	// MessagesScheduled counts records a produce scheduled for later (a
	// per-message delay), kept in the partition's schedule on its owner.
	MessagesScheduled(topic string, partition int32, records int)
	// MessagesReleased counts scheduled records moved to their partition's
	// log when due; lagsMs holds how late each was (release time less its
	// deliver-at).
	MessagesReleased(topic string, partition int32, lagsMs []int64)
	// CorruptSkipped counts unreadable records skipped by queue consumers.
	CorruptSkipped(topic string, partition int32)
	// Error counts a cross-cutting error by component and kind.
	Error(component, kind string)
}
