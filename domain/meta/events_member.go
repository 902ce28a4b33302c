package meta

// MemberJoin (type 6) registers or re-registers a node: upserts its record
// alive, stamped at the envelope time, keeping Draining. A tombstoned id is
// refused.
type MemberJoin struct {
	ID          string    `json:"id"`
	Addr        string    `json:"addr"`
	ClusterAddr string    `json:"cluster_addr"`
	Build       string    `json:"build,omitempty"`
	EntryTypes  EntryType `json:"entry_types,omitempty"`
}

// MemberHeartbeat (type 7) stamps a member's last heartbeat (and its build
// report) at the envelope time, by the leader's clock.
type MemberHeartbeat struct {
	ID         string    `json:"id"`
	Build      string    `json:"build,omitempty"`
	EntryTypes EntryType `json:"entry_types,omitempty"`
}

// MemberDead (type 8, legacy) marks a member dead unconditionally.
type MemberDead struct {
	ID string `json:"id"`
}

// MarkMemberDeadIf (type 31) marks a member dead only if no heartbeat newer
// than Heartbeat (Unix seconds, the stamp judged) is on record.
type MarkMemberDeadIf struct {
	ID        string `json:"id"`
	Heartbeat int64  `json:"heartbeat"`
}

// SetMemberDraining (type 18) sets or clears a member's decommission mark.
type SetMemberDraining struct {
	ID       string `json:"id"`
	Draining bool   `json:"draining"`
}

// RemoveMember (type 19) deletes a member record and tombstones its id.
type RemoveMember struct {
	ID string `json:"id"`
}

// ReadmitMember (type 20) clears a tombstone so the id may register again.
type ReadmitMember struct {
	ID string `json:"id"`
}

func (*MemberJoin) Type() EntryType        { return TypeMemberJoin }
func (*MemberHeartbeat) Type() EntryType   { return TypeMemberHeartbeat }
func (*MemberDead) Type() EntryType        { return TypeMemberDead }
func (*MarkMemberDeadIf) Type() EntryType  { return TypeMarkMemberDeadIf }
func (*SetMemberDraining) Type() EntryType { return TypeSetMemberDraining }
func (*RemoveMember) Type() EntryType      { return TypeRemoveMember }
func (*ReadmitMember) Type() EntryType     { return TypeReadmitMember }

func (e *MemberJoin) Subject() string        { return "member " + e.ID }
func (e *MemberHeartbeat) Subject() string   { return "member " + e.ID }
func (e *MemberDead) Subject() string        { return "member " + e.ID }
func (e *MarkMemberDeadIf) Subject() string  { return "member " + e.ID }
func (e *SetMemberDraining) Subject() string { return "member " + e.ID }
func (e *RemoveMember) Subject() string      { return "member " + e.ID }
func (e *ReadmitMember) Subject() string     { return "member " + e.ID }

// Validate checks the id and both addresses.
func (e *MemberJoin) Validate() error {
	if err := ValidMemberID(e.ID); err != nil {
		return err
	}
	if err := validAddr("addr", e.Addr); err != nil {
		return err
	}
	return validAddr("cluster_addr", e.ClusterAddr)
}

// Validate checks the id.
func (e *MemberHeartbeat) Validate() error { return ValidMemberID(e.ID) }

// Validate checks the id.
func (e *MemberDead) Validate() error { return ValidMemberID(e.ID) }

// Validate checks the id and the judged stamp.
func (e *MarkMemberDeadIf) Validate() error {
	if e.Heartbeat < 0 {
		return invalid("heartbeat %d is negative", e.Heartbeat)
	}
	return ValidMemberID(e.ID)
}

// Validate checks the id.
func (e *SetMemberDraining) Validate() error { return ValidMemberID(e.ID) }

// Validate checks the id.
func (e *RemoveMember) Validate() error { return ValidMemberID(e.ID) }

// Validate checks the id.
func (e *ReadmitMember) Validate() error { return ValidMemberID(e.ID) }
