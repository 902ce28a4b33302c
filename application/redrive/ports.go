package redrive

import (
	"context"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Store is what the runner reads and writes of the metadata: topics (the
// jobs live in them), users (whose grants a job acts with), proposals and
// whether this node leads.
type Store interface {
	ports.MetadataTopics
	ports.MetadataProposer
	User(name string) (u meta.User, ok bool, err error)
	Versions() meta.Versions
	IsLeader() bool
}

// Source leases and acks the letters of a dead-letter topic, routed to
// their owners as any consume on this node is.
type Source interface {
	// Lease leases up to max messages, waiting up to wait for the first.
	Lease(ctx context.Context, topic string, max int, wait time.Duration) ([]domain.Delivery, error)
	// Ack settles hs; out[i] is the refusal of hs[i] (nil when acked).
	Ack(ctx context.Context, topic string, hs []domain.ReceiptHandle) (out []error, err error)
}

// Message is a letter's original key and payload on its way back.
type Message struct {
	Key, Payload []byte
}

// Sink produces to a topic; nil means every message is as durable as a
// produce answered 202.
type Sink interface {
	Produce(ctx context.Context, topic string, msgs []Message) error
}

// Metrics counts what jobs move.
type Metrics interface {
	RedriveMoved(topic string, n int)
}
