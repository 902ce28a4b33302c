package ports

import "context"

// DeadLetterSink writes a dead letter into its dead-letter topic through
// the produce path (issue 19): nil means the record is as durable as a
// produce answered 202, on any partition of topic the produce path picks
// for key. Refusals are the produce path's (an unknown topic, a record too
// large, a schema refusal, a WAL failure).
type DeadLetterSink interface {
	ProduceDeadLetter(ctx context.Context, topic string, key, payload []byte) error
}
