package meta

import "fmt"

// AssignPartition (type 5, legacy) overwrites a partition's owner
// unconditionally. Superseded by AssignPartitionIfAbsent.
type AssignPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Owner     string `json:"owner"`
}

// AssignPartitionIfAbsent (type 29) places a partition of incarnation
// TopicID on Owner only if it has no row: placement never replaces an owner.
type AssignPartitionIfAbsent struct {
	Topic     string `json:"topic"`
	TopicID   string `json:"topic_id"`
	Partition int32  `json:"partition"`
	Owner     string `json:"owner"`
}

// PruneAssignment (type 30) deletes a row that belongs to no partition (topic
// gone, other incarnation, or index out of range); it refuses a live row.
type PruneAssignment struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// SetAssignmentTarget (type 15) starts a move (Target set) or clears it
// (Target empty). Idempotent. TopicID, when set, must be the live incarnation.
type SetAssignmentTarget struct {
	Topic     string `json:"topic"`
	TopicID   string `json:"topic_id,omitempty"`
	Partition int32  `json:"partition"`
	Target    string `json:"target,omitempty"`
}

// CompleteMove (type 16) flips ownership: only if the owner is still
// ExpectedOwner and the target is still Target.
type CompleteMove struct {
	Topic         string `json:"topic"`
	TopicID       string `json:"topic_id,omitempty"`
	Partition     int32  `json:"partition"`
	ExpectedOwner string `json:"expected_owner"`
	Target        string `json:"target"`
}

// AbortMove (type 17) clears the target only if it still is ExpectedTarget.
type AbortMove struct {
	Topic          string `json:"topic"`
	TopicID        string `json:"topic_id,omitempty"`
	Partition      int32  `json:"partition"`
	ExpectedTarget string `json:"expected_target"`
}

func (*AssignPartition) Type() EntryType         { return TypeAssignPartition }
func (*AssignPartitionIfAbsent) Type() EntryType { return TypeAssignPartitionIfAbsent }
func (*PruneAssignment) Type() EntryType         { return TypePruneAssignment }
func (*SetAssignmentTarget) Type() EntryType     { return TypeSetAssignmentTarget }
func (*CompleteMove) Type() EntryType            { return TypeCompleteMove }
func (*AbortMove) Type() EntryType               { return TypeAbortMove }

func partSubject(topic string, p int32) string { return fmt.Sprintf("partition %s/%d", topic, p) }

func (e *AssignPartition) Subject() string         { return partSubject(e.Topic, e.Partition) }
func (e *AssignPartitionIfAbsent) Subject() string { return partSubject(e.Topic, e.Partition) }
func (e *PruneAssignment) Subject() string         { return partSubject(e.Topic, e.Partition) }
func (e *SetAssignmentTarget) Subject() string     { return partSubject(e.Topic, e.Partition) }
func (e *CompleteMove) Subject() string            { return partSubject(e.Topic, e.Partition) }
func (e *AbortMove) Subject() string               { return partSubject(e.Topic, e.Partition) }

func validRow(topic, topicID string, p int32, idRequired bool, members ...string) error {
	if err := validTopicRef(topic); err != nil {
		return err
	}
	if topicID != "" || idRequired {
		if err := validTopicID(topicID); err != nil {
			return err
		}
	}
	if err := validPartition(p); err != nil {
		return err
	}
	for _, m := range members {
		if err := ValidMemberID(m); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks the row and the owner.
func (e *AssignPartition) Validate() error { return validRow(e.Topic, "", e.Partition, false, e.Owner) }

// Validate checks the row, the incarnation and the owner.
func (e *AssignPartitionIfAbsent) Validate() error {
	return validRow(e.Topic, e.TopicID, e.Partition, true, e.Owner)
}

// Validate checks the row.
func (e *PruneAssignment) Validate() error { return validRow(e.Topic, "", e.Partition, false) }

// Validate checks the row and the target when set.
func (e *SetAssignmentTarget) Validate() error {
	if e.Target == "" {
		return validRow(e.Topic, e.TopicID, e.Partition, false)
	}
	return validRow(e.Topic, e.TopicID, e.Partition, false, e.Target)
}

// Validate checks the row, the expected owner and the target.
func (e *CompleteMove) Validate() error {
	return validRow(e.Topic, e.TopicID, e.Partition, false, e.ExpectedOwner, e.Target)
}

// Validate checks the row and the expected target.
func (e *AbortMove) Validate() error {
	return validRow(e.Topic, e.TopicID, e.Partition, false, e.ExpectedTarget)
}
