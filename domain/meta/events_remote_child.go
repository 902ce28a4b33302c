package meta

import "unicode/utf8"

// AttachRemoteChild (type 33) creates Child as a remote child of Parent: a
// partition-less stub carrying the link to RemoteTopic on remote Remote. The
// leader has run the members' target checks and resolved Offsets (one start
// offset per parent partition, from From) before proposing; apply re-checks
// what the views decide: the parent incarnation, the name, the remote
// incarnation, the per-parent and per-target bounds and the parent's
// retention.
type AttachRemoteChild struct {
	Parent   string `json:"parent"`
	ParentID string `json:"parent_id,omitempty"` // empty for a parent created before ids
	Child    string `json:"child"`
	ChildID  string `json:"child_id"`
	Epoch    string `json:"epoch"`
	DelayMs  int64  `json:"delay_ms,omitempty"`
	// Offsets is the attach point, one start offset per parent partition.
	Offsets     []int64 `json:"offsets,omitempty"`
	Remote      string  `json:"remote"`
	RemoteID    string  `json:"remote_id"`
	RemoteTopic string  `json:"remote_topic"`
	// TargetID is the target topic's id every member saw; empty when the
	// target serves no ids.
	TargetID string `json:"target_id,omitempty"`
	From     string `json:"from"`
	Lanes    int32  `json:"lanes"`
}

// Remote child state changes (SetRemoteChildState.Op).
const (
	RemoteOpPause        = "pause"
	RemoteOpResume       = "resume"
	RemoteOpAcceptTarget = "accept_target"
	RemoteOpSkip         = "skip"
)

// SetRemoteChildState (type 34) changes a remote child's link, on stub
// incarnation ChildID only:
//   - pause: stop sending, with an optional Reason (a second pause replaces
//     only the reason);
//   - resume: send again (the leader re-ran the target checks);
//   - accept_target: resume, recording the recreated target's id TargetID;
//   - skip: record that parent partition Partition's record at Offset may
//     be dropped (the leader saw the cursor stuck on exactly it).
type SetRemoteChildState struct {
	Parent    string `json:"parent"`
	Child     string `json:"child"`
	ChildID   string `json:"child_id"`
	Op        string `json:"op"`
	Reason    string `json:"reason,omitempty"`
	TargetID  string `json:"target_id,omitempty"`
	Partition int32  `json:"partition,omitempty"`
	Offset    int64  `json:"offset,omitempty"`
}

func (*AttachRemoteChild) Type() EntryType   { return TypeAttachRemoteChild }
func (*SetRemoteChildState) Type() EntryType { return TypeSetRemoteChildState }

func (e *AttachRemoteChild) Subject() string   { return "link " + e.Parent + " -> " + e.Child }
func (e *SetRemoteChildState) Subject() string { return "link " + e.Parent + " -> " + e.Child }

// Validate checks names, ids, the link's shape and the remote fields.
func (e *AttachRemoteChild) Validate() error {
	if err := ValidNewTopicName(e.Child); err != nil {
		return err
	}
	ids := []string{e.ChildID}
	if e.ParentID != "" {
		ids = append(ids, e.ParentID)
	}
	if err := validLink(e.Parent, e.Child, e.Epoch, e.DelayMs, e.Offsets, ids...); err != nil {
		return err
	}
	if err := validRemoteRef(e.Remote, e.RemoteID); err != nil {
		return err
	}
	if err := validTopicRef(e.RemoteTopic); err != nil {
		return err
	}
	if e.TargetID != "" {
		if err := validTopicID(e.TargetID); err != nil {
			return err
		}
	}
	if e.From != RemoteFromAttach && e.From != RemoteFromUnconsumed && e.From != RemoteFromEarliest {
		return invalid("from %q is not attach, unconsumed or earliest", e.From)
	}
	if e.Lanes < 1 || e.Lanes > RemoteLanesMax {
		return invalid("lanes %d outside 1..%d", e.Lanes, RemoteLanesMax)
	}
	return nil
}

// Validate checks the reference and that the fields fit the operation.
func (e *SetRemoteChildState) Validate() error {
	if err := validTopicRef(e.Parent); err != nil {
		return err
	}
	if err := validTopicRef(e.Child); err != nil {
		return err
	}
	if err := validTopicID(e.ChildID); err != nil {
		return err
	}
	pauseFields := e.Reason != ""
	targetFields := e.TargetID != ""
	skipFields := e.Partition != 0 || e.Offset != 0
	switch e.Op {
	case RemoteOpPause:
		if targetFields || skipFields {
			return invalid("pause carries only a reason")
		}
		return validPauseReason(e.Reason)
	case RemoteOpResume:
		if pauseFields || targetFields || skipFields {
			return invalid("resume carries no field")
		}
	case RemoteOpAcceptTarget:
		if pauseFields || skipFields {
			return invalid("accept_target carries only the target id")
		}
		if targetFields {
			return validTopicID(e.TargetID)
		}
	case RemoteOpSkip:
		if pauseFields || targetFields {
			return invalid("skip carries only a partition and an offset")
		}
		if err := validPartition(e.Partition); err != nil {
			return err
		}
		if e.Offset < 0 {
			return invalid("skip offset %d is negative", e.Offset)
		}
	default:
		return invalid("remote child operation %q is not pause, resume, accept_target or skip", e.Op)
	}
	return nil
}

// ValidPauseReason checks a pause reason: at most PauseReasonMaxBytes of
// printable UTF-8 text (empty allowed). "Printable" is a fixed rule (no C0
// or C1 control character, no DEL), not Unicode's tables: apply runs this
// check, and two builds on different Unicode versions must agree.
func ValidPauseReason(reason string) error { return validPauseReason(reason) }

func validPauseReason(reason string) error {
	if len(reason) > PauseReasonMaxBytes {
		return invalid("pause reason of %d bytes above %d", len(reason), PauseReasonMaxBytes)
	}
	if !utf8.ValidString(reason) {
		return invalid("pause reason is not valid UTF-8")
	}
	for _, r := range reason {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) {
			return invalid("pause reason holds the non-printable character %U", r)
		}
	}
	return nil
}
