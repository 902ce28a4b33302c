package meta

// PutSchema (type 4) appends version Version to a topic's schema history and
// copies it to the topic's descendants. Only latest+1 is accepted.
type PutSchema struct {
	Topic   string `json:"topic"`
	Version int32  `json:"version"`
	Schema  []byte `json:"schema"`
}

// PutSchemaIf (type 26) is PutSchema on incarnation ID only.
type PutSchemaIf struct {
	PutSchema
	ID string `json:"id"`
}

// AttachChild (type 13) makes Child a fan-out child of Parent at Epoch, with
// an optional delay and the attach point (one start offset per parent
// partition).
type AttachChild struct {
	Parent  string  `json:"parent"`
	Child   string  `json:"child"`
	Epoch   string  `json:"epoch"`
	DelayMs int64   `json:"delay_ms,omitempty"`
	Offsets []int64 `json:"offsets,omitempty"`
}

// AttachChildIf (type 27) is AttachChild checking both incarnations.
type AttachChildIf struct {
	AttachChild
	ParentID string `json:"parent_id"`
	ChildID  string `json:"child_id"`
}

// DetachChild (type 14) dissolves the link between Parent and Child.
type DetachChild struct {
	Parent string `json:"parent"`
	Child  string `json:"child"`
}

// DetachChildIf (type 28) is DetachChild checking both incarnations.
type DetachChildIf struct {
	DetachChild
	ParentID string `json:"parent_id"`
	ChildID  string `json:"child_id"`
}

func (*PutSchema) Type() EntryType     { return TypePutSchema }
func (*PutSchemaIf) Type() EntryType   { return TypePutSchemaIf }
func (*AttachChild) Type() EntryType   { return TypeAttachChild }
func (*AttachChildIf) Type() EntryType { return TypeAttachChildIf }
func (*DetachChild) Type() EntryType   { return TypeDetachChild }
func (*DetachChildIf) Type() EntryType { return TypeDetachChildIf }

func (e *PutSchema) Subject() string   { return "topic " + e.Topic }
func (e *AttachChild) Subject() string { return "link " + e.Parent + " -> " + e.Child }
func (e *DetachChild) Subject() string { return "link " + e.Parent + " -> " + e.Child }

// Validate checks the topic, version and document.
func (e *PutSchema) Validate() error {
	if err := validTopicRef(e.Topic); err != nil {
		return err
	}
	if e.Version < 1 || e.Version > SchemaVersionsMaxCount {
		return invalid("schema version %d outside 1..%d", e.Version, SchemaVersionsMaxCount)
	}
	return validSchemaDoc(e.Schema)
}

// Validate also requires the incarnation id.
func (e *PutSchemaIf) Validate() error {
	if err := e.PutSchema.Validate(); err != nil {
		return err
	}
	return validTopicID(e.ID)
}

// Validate checks names, epoch, delay and offsets.
func (e *AttachChild) Validate() error {
	return validLink(e.Parent, e.Child, e.Epoch, e.DelayMs, e.Offsets)
}

// Validate also requires both incarnation ids.
func (e *AttachChildIf) Validate() error {
	return validLink(e.Parent, e.Child, e.Epoch, e.DelayMs, e.Offsets, e.ParentID, e.ChildID)
}

// Validate checks both names.
func (e *DetachChild) Validate() error {
	if err := validTopicRef(e.Parent); err != nil {
		return err
	}
	return validTopicRef(e.Child)
}

// Validate also requires both incarnation ids.
func (e *DetachChildIf) Validate() error {
	if err := e.DetachChild.Validate(); err != nil {
		return err
	}
	if err := validTopicID(e.ParentID); err != nil {
		return err
	}
	return validTopicID(e.ChildID)
}
