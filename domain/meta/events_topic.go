package meta

import "encoding/json"

// CreateTopic (type 1) creates a topic incarnation. The proposer resolves
// defaults and mints ID; apply refuses a name taken in any letter case.
type CreateTopic struct {
	Name                string `json:"name"`
	ID                  string `json:"id"`
	Partitions          int32  `json:"partitions"`
	RetentionMs         int64  `json:"retention_ms"`
	VisibilityTimeoutMs int64  `json:"visibility_timeout_ms"`
	MaxInFlight         int64  `json:"max_in_flight_per_partition"`
	MaxAckedAhead       int64  `json:"max_acked_ahead_per_partition"`
	Owner               string `json:"owner,omitempty"`
}

// UpdateTopic (type 2) replaces a topic's configuration, keeping its link
// fields, owner, creation time and visibility timeout. Partitions only grow.
type UpdateTopic struct {
	Name          string `json:"name"`
	Partitions    int32  `json:"partitions"`
	RetentionMs   int64  `json:"retention_ms"`
	MaxInFlight   int64  `json:"max_in_flight_per_partition"`
	MaxAckedAhead int64  `json:"max_acked_ahead_per_partition"`
}

// UpdateTopicIf (type 24) is UpdateTopic applied only to the incarnation the
// proposer read; a partition count below the current one means the topic
// grew under the request and is a conflict.
type UpdateTopicIf struct {
	UpdateTopic
	ID string `json:"id"`
}

// DeleteTopic (type 3) deletes a topic: dissolves its links, drops its
// schemas and assignment rows.
type DeleteTopic struct {
	Name string `json:"name"`
}

// DeleteTopicIf (type 25) deletes only the incarnation ID.
type DeleteTopicIf struct {
	Name string `json:"name"`
	ID   string `json:"id"`
}

// ParentSpec names the parent a CreateTopicWith attaches the new topic to.
type ParentSpec struct {
	Name    string  `json:"name"`
	ID      string  `json:"id"`
	Epoch   string  `json:"epoch"`
	DelayMs int64   `json:"delay_ms,omitempty"`
	Offsets []int64 `json:"offsets,omitempty"`
}

// CreateTopicWith (type 23) creates a topic, its first schema and its parent
// link in one entry: all or nothing.
type CreateTopicWith struct {
	CreateTopic
	Schema []byte      `json:"schema,omitempty"`
	Parent *ParentSpec `json:"parent,omitempty"`
}

func (*CreateTopic) Type() EntryType     { return TypeCreateTopic }
func (*UpdateTopic) Type() EntryType     { return TypeUpdateTopic }
func (*UpdateTopicIf) Type() EntryType   { return TypeUpdateTopicIf }
func (*DeleteTopic) Type() EntryType     { return TypeDeleteTopic }
func (*DeleteTopicIf) Type() EntryType   { return TypeDeleteTopicIf }
func (*CreateTopicWith) Type() EntryType { return TypeCreateTopicWith }

func (e *CreateTopic) Subject() string     { return "topic " + e.Name }
func (e *UpdateTopic) Subject() string     { return "topic " + e.Name }
func (e *DeleteTopic) Subject() string     { return "topic " + e.Name }
func (e *DeleteTopicIf) Subject() string   { return "topic " + e.Name }
func (e *CreateTopicWith) Subject() string { return "topic " + e.Name }

// Validate checks names, id and ranges.
func (e *CreateTopic) Validate() error {
	if err := ValidNewTopicName(e.Name); err != nil {
		return err
	}
	if err := validTopicID(e.ID); err != nil {
		return err
	}
	if e.Partitions < 1 || e.Partitions > PartitionsMaxCount {
		return invalid("partitions %d outside 1..%d", e.Partitions, PartitionsMaxCount)
	}
	if e.VisibilityTimeoutMs <= 0 {
		return invalid("visibility_timeout_ms %d must be positive", e.VisibilityTimeoutMs)
	}
	if e.Owner != "" {
		if err := ValidUsername(e.Owner); err != nil {
			return err
		}
	}
	return validConfig(e.RetentionMs, e.MaxInFlight, e.MaxAckedAhead)
}

func validConfig(retentionMs, maxInFlight, maxAckedAhead int64) error {
	if err := validRetention(retentionMs); err != nil {
		return err
	}
	if maxInFlight < 0 || maxAckedAhead < 0 {
		return invalid("per-partition caps must be >= 0")
	}
	return nil
}

// Validate checks the name and ranges.
func (e *UpdateTopic) Validate() error {
	if err := validTopicRef(e.Name); err != nil {
		return err
	}
	if e.Partitions < 1 || e.Partitions > PartitionsMaxCount {
		return invalid("partitions %d outside 1..%d", e.Partitions, PartitionsMaxCount)
	}
	return validConfig(e.RetentionMs, e.MaxInFlight, e.MaxAckedAhead)
}

// Validate also requires the incarnation id.
func (e *UpdateTopicIf) Validate() error {
	if err := e.UpdateTopic.Validate(); err != nil {
		return err
	}
	return validTopicID(e.ID)
}

// Validate checks the name.
func (e *DeleteTopic) Validate() error { return validTopicRef(e.Name) }

// Validate checks the name and id.
func (e *DeleteTopicIf) Validate() error {
	if err := validTopicRef(e.Name); err != nil {
		return err
	}
	return validTopicID(e.ID)
}

func validSchemaDoc(doc []byte) error {
	if len(doc) == 0 || len(doc) > SchemaDocMaxBytes {
		return invalid("schema of %d bytes outside 1..%d", len(doc), SchemaDocMaxBytes)
	}
	if !json.Valid(doc) {
		return invalid("schema is not valid JSON")
	}
	return nil
}

// Validate checks the topic, the optional schema and the optional parent.
func (e *CreateTopicWith) Validate() error {
	if err := e.CreateTopic.Validate(); err != nil {
		return err
	}
	if e.Schema != nil {
		if err := validSchemaDoc(e.Schema); err != nil {
			return err
		}
	}
	if e.Parent == nil {
		return nil
	}
	return validLink(e.Parent.Name, e.Name, e.Parent.Epoch, e.Parent.DelayMs, e.Parent.Offsets, e.Parent.ID)
}

func validLink(parent, child, epoch string, delayMs int64, offsets []int64, ids ...string) error {
	if err := validTopicRef(parent); err != nil {
		return err
	}
	if err := validTopicRef(child); err != nil {
		return err
	}
	if parent == child {
		return invalid("topic %q cannot be its own child", child)
	}
	if err := validEpoch(epoch); err != nil {
		return err
	}
	if delayMs < 0 || delayMs > DelayMaxMs {
		return invalid("fanout delay %d ms outside 0..%d", delayMs, DelayMaxMs)
	}
	for _, id := range ids {
		if err := validTopicID(id); err != nil {
			return err
		}
	}
	return validOffsets(offsets)
}
