package domain

import "fmt"

// PartitionMax is the highest partition number a record may name (2^31-1).
const PartitionMax = 1<<31 - 1

// TopicID identifies one incarnation of a topic: 8 random bytes written as 16
// lowercase hex characters. Empty for topics that predate incarnations.
type TopicID string

// topicIDHexLen is the length of a TopicID in characters.
const topicIDHexLen = 16

// Valid reports whether id is empty (legacy) or 16 lowercase hex characters.
func (id TopicID) Valid() bool {
	if id == "" {
		return true
	}
	if len(id) != topicIDHexLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// IngressRecord is one accepted produce as the ingress WAL holds it: enough to
// commit it to its partition owner later.
type IngressRecord struct {
	Topic       string
	TopicID     TopicID
	Key         []byte
	Partition   int32
	CreatedAtMs int64
	Payload     []byte
	// DeliverAtMs, when set, is the earliest time (unix ms) the record may
	// be delivered: a scheduled record (per-message delay). Zero: at once.
	DeliverAtMs int64
}

// Validate reports ErrInvalidRecord for a record no WAL may hold.
func (r IngressRecord) Validate() error {
	switch {
	case r.Topic == "":
		return fmt.Errorf("empty topic: %w", ErrInvalidRecord)
	case len(r.Payload) == 0:
		return fmt.Errorf("empty payload: %w", ErrInvalidRecord)
	case r.Partition < 0:
		return fmt.Errorf("partition %d out of range: %w", r.Partition, ErrInvalidRecord)
	case r.CreatedAtMs < 0:
		return fmt.Errorf("negative created_at_ms: %w", ErrInvalidRecord)
	case r.DeliverAtMs < 0:
		return fmt.Errorf("negative deliver_at_ms: %w", ErrInvalidRecord)
	case !r.TopicID.Valid():
		return fmt.Errorf("topic id %q is not 16 lowercase hex characters: %w", r.TopicID, ErrInvalidRecord)
	}
	return nil
}

// Record is one message in a partition log. Offset and CommittedAtMs are set
// by the log on commit; a caller proposes CommittedAtMs and the log raises it
// so commit times never decrease along a partition.
type Record struct {
	Offset        int64
	Key           []byte
	Payload       []byte
	CommittedAtMs int64
	// DeliverAtMs, when set, is the earliest time (unix ms) the record may
	// be delivered: a scheduled record (per-message delay).
	DeliverAtMs int64
}

// PartitionRef names one partition of one topic incarnation.
type PartitionRef struct {
	Topic     string
	TopicID   TopicID
	Partition int32
}

func (p PartitionRef) String() string {
	return fmt.Sprintf("%s/%d", p.Topic, p.Partition)
}
