package meta

import "fmt"

// EntryType numbers a kind of metadata entry. The numbers are part of the
// replicated log format: frozen and append-only, never reused.
type EntryType uint8

// Entry types, numbered as the original Narad numbers them.
const (
	TypeCreateTopic             EntryType = 1
	TypeUpdateTopic             EntryType = 2
	TypeDeleteTopic             EntryType = 3
	TypePutSchema               EntryType = 4
	TypeAssignPartition         EntryType = 5
	TypeMemberJoin              EntryType = 6
	TypeMemberHeartbeat         EntryType = 7
	TypeMemberDead              EntryType = 8
	TypeCreateUser              EntryType = 9
	TypeUpdateUser              EntryType = 10
	TypeDeleteUser              EntryType = 11
	TypeSeedRootUser            EntryType = 12
	TypeAttachChild             EntryType = 13
	TypeDetachChild             EntryType = 14
	TypeSetAssignmentTarget     EntryType = 15
	TypeCompleteMove            EntryType = 16
	TypeAbortMove               EntryType = 17
	TypeSetMemberDraining       EntryType = 18
	TypeRemoveMember            EntryType = 19
	TypeReadmitMember           EntryType = 20
	TypeSetUserPassword         EntryType = 21
	TypeSetUserGrants           EntryType = 22
	TypeCreateTopicWith         EntryType = 23
	TypeUpdateTopicIf           EntryType = 24
	TypeDeleteTopicIf           EntryType = 25
	TypePutSchemaIf             EntryType = 26
	TypeAttachChildIf           EntryType = 27
	TypeDetachChildIf           EntryType = 28
	TypeAssignPartitionIfAbsent EntryType = 29
	TypePruneAssignment         EntryType = 30
	TypeMarkMemberDeadIf        EntryType = 31
	TypeDeleteUserReleaseTopics EntryType = 32
	TypeAttachRemoteChild       EntryType = 33
	TypeSetRemoteChildState     EntryType = 34
	TypePutRemote               EntryType = 35
	TypeUpdateRemote            EntryType = 36
	TypeDeleteRemote            EntryType = 37
	TypeSetTopicRedelivery      EntryType = 38
	TypeSetTopicDeadLetter      EntryType = 39
	TypeSetTopicRedrive         EntryType = 40
)

const (
	// LegacyNewestType is the newest type of the set every v3.0.x release
	// applies (1–22).
	LegacyNewestType = TypeSetUserGrants
	// AppliesThroughType is the newest type of the contiguous range 1..N this
	// build applies (every type up to SetTopicRedrive); heartbeats and
	// joins report it for the entry-type gate, and a database or snapshot
	// that applied a newer type is refused.
	AppliesThroughType = TypeSetTopicRedrive
)

var typeNames = map[EntryType]string{
	TypeCreateTopic: "CreateTopic", TypeUpdateTopic: "UpdateTopic",
	TypeDeleteTopic: "DeleteTopic", TypePutSchema: "PutSchema",
	TypeAssignPartition: "AssignPartition", TypeMemberJoin: "MemberJoin",
	TypeMemberHeartbeat: "MemberHeartbeat", TypeMemberDead: "MemberDead",
	TypeCreateUser: "CreateUser", TypeUpdateUser: "UpdateUser",
	TypeDeleteUser: "DeleteUser", TypeSeedRootUser: "SeedRootUser",
	TypeAttachChild: "AttachChild", TypeDetachChild: "DetachChild",
	TypeSetAssignmentTarget: "SetAssignmentTarget", TypeCompleteMove: "CompleteMove",
	TypeAbortMove: "AbortMove", TypeSetMemberDraining: "SetMemberDraining",
	TypeRemoveMember: "RemoveMember", TypeReadmitMember: "ReadmitMember",
	TypeSetUserPassword: "SetUserPassword", TypeSetUserGrants: "SetUserGrants",
	TypeCreateTopicWith: "CreateTopicWith", TypeUpdateTopicIf: "UpdateTopicIf",
	TypeDeleteTopicIf: "DeleteTopicIf", TypePutSchemaIf: "PutSchemaIf",
	TypeAttachChildIf: "AttachChildIf", TypeDetachChildIf: "DetachChildIf",
	TypeAssignPartitionIfAbsent: "AssignPartitionIfAbsent",
	TypePruneAssignment:         "PruneAssignment", TypeMarkMemberDeadIf: "MarkMemberDeadIf",
	TypeDeleteUserReleaseTopics: "DeleteUserReleaseTopics",
	TypeAttachRemoteChild:       "AttachRemoteChild", TypeSetRemoteChildState: "SetRemoteChildState",
	TypePutRemote: "PutRemote", TypeUpdateRemote: "UpdateRemote", TypeDeleteRemote: "DeleteRemote",
	TypeSetTopicRedelivery: "SetTopicRedelivery", TypeSetTopicDeadLetter: "SetTopicDeadLetter",
	TypeSetTopicRedrive: "SetTopicRedrive",
}

// String returns the spec's name of the type, or "type(N)".
func (t EntryType) String() string {
	if name, ok := typeNames[t]; ok {
		return name
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// TypeByName returns the type named name (as String prints it).
func TypeByName(name string) (EntryType, bool) {
	for t, n := range typeNames {
		if n == name {
			return t, true
		}
	}
	return 0, false
}

// newEvent returns an empty event of type t, or false when this build does
// not apply t.
func newEvent(t EntryType) (Event, bool) {
	ctor, ok := eventCtors[t]
	if !ok {
		return nil, false
	}
	return ctor(), true
}

// IsRemoteType reports whether t is one of the remote entry types (33–37)
// that only a RemoteWrite proposes (internals.md §7.8).
func IsRemoteType(t EntryType) bool { return t >= TypeAttachRemoteChild && t <= TypeDeleteRemote }

// Applies reports whether this build applies entries of type t.
func Applies(t EntryType) bool {
	_, ok := eventCtors[t]
	return ok
}

var eventCtors = map[EntryType]func() Event{
	TypeCreateTopic:             func() Event { return &CreateTopic{} },
	TypeUpdateTopic:             func() Event { return &UpdateTopic{} },
	TypeDeleteTopic:             func() Event { return &DeleteTopic{} },
	TypePutSchema:               func() Event { return &PutSchema{} },
	TypeAssignPartition:         func() Event { return &AssignPartition{} },
	TypeMemberJoin:              func() Event { return &MemberJoin{} },
	TypeMemberHeartbeat:         func() Event { return &MemberHeartbeat{} },
	TypeMemberDead:              func() Event { return &MemberDead{} },
	TypeCreateUser:              func() Event { return &CreateUser{} },
	TypeUpdateUser:              func() Event { return &UpdateUser{} },
	TypeDeleteUser:              func() Event { return &DeleteUser{} },
	TypeSeedRootUser:            func() Event { return &SeedRootUser{} },
	TypeAttachChild:             func() Event { return &AttachChild{} },
	TypeDetachChild:             func() Event { return &DetachChild{} },
	TypeSetAssignmentTarget:     func() Event { return &SetAssignmentTarget{} },
	TypeCompleteMove:            func() Event { return &CompleteMove{} },
	TypeAbortMove:               func() Event { return &AbortMove{} },
	TypeSetMemberDraining:       func() Event { return &SetMemberDraining{} },
	TypeRemoveMember:            func() Event { return &RemoveMember{} },
	TypeReadmitMember:           func() Event { return &ReadmitMember{} },
	TypeSetUserPassword:         func() Event { return &SetUserPassword{} },
	TypeSetUserGrants:           func() Event { return &SetUserGrants{} },
	TypeCreateTopicWith:         func() Event { return &CreateTopicWith{} },
	TypeUpdateTopicIf:           func() Event { return &UpdateTopicIf{} },
	TypeDeleteTopicIf:           func() Event { return &DeleteTopicIf{} },
	TypePutSchemaIf:             func() Event { return &PutSchemaIf{} },
	TypeAttachChildIf:           func() Event { return &AttachChildIf{} },
	TypeDetachChildIf:           func() Event { return &DetachChildIf{} },
	TypeAssignPartitionIfAbsent: func() Event { return &AssignPartitionIfAbsent{} },
	TypePruneAssignment:         func() Event { return &PruneAssignment{} },
	TypeMarkMemberDeadIf:        func() Event { return &MarkMemberDeadIf{} },
	TypeDeleteUserReleaseTopics: func() Event { return &DeleteUserReleaseTopics{} },
	TypeAttachRemoteChild:       func() Event { return &AttachRemoteChild{} },
	TypeSetRemoteChildState:     func() Event { return &SetRemoteChildState{} },
	TypePutRemote:               func() Event { return &PutRemote{} },
	TypeUpdateRemote:            func() Event { return &UpdateRemote{} },
	TypeDeleteRemote:            func() Event { return &DeleteRemote{} },
	TypeSetTopicRedelivery:      func() Event { return &SetTopicRedelivery{} },
	TypeSetTopicDeadLetter:      func() Event { return &SetTopicDeadLetter{} },
	TypeSetTopicRedrive:         func() Event { return &SetTopicRedrive{} },
}
