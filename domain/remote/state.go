package remote

// State is a link state (internals.md §7.4). States are ordered worst first:
// a smaller value is worse. The zero State is not a state.
type State uint8

// The link states, worst first (internals.md §7.4, api.md §5.8).
const (
	RemoteMissing           State = iota + 1 // remote deleted with force
	CredentialUnreadable                     // this node cannot open the sealed password
	NodeInsecure                             // security off or legacy cluster auth on
	DestinationRefused                       // the address guard, port or host list refused the dial
	TargetHasRemoteChildren                  // the loop rule
	TargetReplaced                           // the target topic id changed
	AuthFailed                               // target 401
	Forbidden                                // target 403
	TargetMissing                            // Narad's 404
	NoBatchProduce                           // target older than v3.1.0
	RedirectRefused                          // target 3xx
	TLSFailed                                // TLS handshake failed
	RejectedRecord                           // the target refused one record for good
	RecordTooLarge                           // a single record still gets 413
	Unavailable                              // no answer, timeout, 408, 5xx, an edge answered
	Throttled                                // target 429
	Unknown                                  // the partition's owner did not report
	Paused                                   // an admin paused the link
	Running                                  // sending
	stateEnd
)

var stateNames = [stateEnd]string{
	"",
	"remote_missing",
	"credential_unreadable",
	"node_insecure",
	"destination_refused",
	"target_has_remote_children",
	"target_replaced",
	"auth_failed",
	"forbidden",
	"target_missing",
	"no_batch_produce",
	"redirect_refused",
	"tls_failed",
	"rejected_record",
	"record_too_large",
	"unavailable",
	"throttled",
	"unknown",
	"paused",
	"running",
}

// Valid reports whether s is one of the link states.
func (s State) Valid() bool { return s >= RemoteMissing && s < stateEnd }

// String is the state's name as the children listing and metrics show it.
func (s State) String() string {
	if !s.Valid() {
		return "invalid"
	}
	return stateNames[s]
}

// Worse reports whether s is worse than t in the order of internals.md §7.4.
// An invalid state ranks as unknown.
func (s State) Worse(t State) bool { return s.rank() < t.rank() }

func (s State) rank() State {
	if !s.Valid() {
		return Unknown
	}
	return s
}

// Worst is the link state of a link whose partitions report states: the
// worst of them, running for none (internals.md §7.4). An invalid state
// counts as unknown.
func Worst(states ...State) State {
	worst := Running
	for _, s := range states {
		if s.rank() < worst {
			worst = s.rank()
		}
	}
	return worst
}

// NeedsFix reports whether a link in s stays put until someone acts (a
// fix on either side, a skip, a resume): every state worse than
// unavailable. Unavailable, throttled and unknown pass by themselves;
// paused is an admin's choice.
func (s State) NeedsFix() bool { return s.Valid() && s < Unavailable }

// ParseState is the state named s.
func ParseState(s string) (State, bool) {
	for st := RemoteMissing; st < stateEnd; st++ {
		if stateNames[st] == s {
			return st, true
		}
	}
	return 0, false
}

// AllStates lists every link state, worst first.
func AllStates() []State {
	out := make([]State, 0, stateEnd-RemoteMissing)
	for s := RemoteMissing; s < stateEnd; s++ {
		out = append(out, s)
	}
	return out
}

// HTTPStatus is the status an attach or resume answers when it fails with s
// (internals.md §7.4).
func (s State) HTTPStatus() int {
	switch s {
	case RemoteMissing, CredentialUnreadable, NodeInsecure:
		return statusPreconditionFailed
	case Throttled:
		return statusTooManyRequests
	case RedirectRefused:
		return statusBadGateway
	case Unavailable:
		return statusServiceUnavailable
	}
	return statusConflict
}

// Class is a check class an attach, resume or test check fails with besides
// the link states (internals.md §7.4, api.md §5.8). The zero Class is not a
// class.
type Class uint8

// The check classes.
const (
	OldRelease         Class = iota + 1 // a member runs a release without remotes
	Unreachable                         // a member got no answer within its 15 s
	Stale                               // a member checked with an older credential version
	TargetDisagreement                  // members saw different target ids
	TargetSecurityOff                   // the target answered without credentials
	AdminCredential                     // the credential can list the target's users
	TargetIsSource                      // the target is the parent itself
	TargetIsDelayChild                  // the target is a delay child
	TargetIsStub                        // the target is a remote child's stub
	SchemaMismatch                      // the target's schema differs from the parent's
	Edge                                // something in front of the target answered
	classEnd
)

var classNames = [classEnd]string{
	"",
	"old_release",
	"unreachable",
	"stale",
	"target_disagreement",
	"target_security_off",
	"admin_credential",
	"target_is_source",
	"target_is_delay_child",
	"target_is_stub",
	"schema_mismatch",
	"edge",
}

// Valid reports whether c is one of the check classes.
func (c Class) Valid() bool { return c >= OldRelease && c < classEnd }

// String is the class's name as a check reports it.
func (c Class) String() string {
	if !c.Valid() {
		return "invalid"
	}
	return classNames[c]
}

// ParseClass is the check class named s (link states are not classes here).
func ParseClass(s string) (Class, bool) {
	for c := OldRelease; c < classEnd; c++ {
		if classNames[c] == s {
			return c, true
		}
	}
	return 0, false
}

// AllClasses lists every check class in the order of internals.md §7.4.
func AllClasses() []Class {
	out := make([]Class, 0, classEnd-OldRelease)
	for c := OldRelease; c < classEnd; c++ {
		out = append(out, c)
	}
	return out
}

// HTTPStatus is the status a check failing with c answers (internals.md §7.4).
func (c Class) HTTPStatus() int {
	switch c {
	case OldRelease, Unreachable, Stale, TargetDisagreement:
		return statusPreconditionFailed
	case Edge:
		return statusBadGateway
	}
	return statusConflict
}

// HTTPStatus maps a link state or check class name to the status an attach,
// resume or failed check answers (internals.md §7.4, api.md §5.8). Any other
// name answers 409, the status of "all others".
func HTTPStatus(class string) int {
	if s, ok := ParseState(class); ok {
		return s.HTTPStatus()
	}
	if c, ok := ParseClass(class); ok {
		return c.HTTPStatus()
	}
	return statusConflict
}
