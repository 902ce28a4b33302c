package users

import "time"

// Spec constants (internals.md §12.1, §8.7; api.md §4.2). Units are in the
// names or the types.
const (
	// hashesInFlightMax bounds the password hashes one Service runs at once
	// (internals §12.1: user create and password change have their own
	// bound of 2, apart from the authenticator's 4 verifications).
	hashesInFlightMax = 2
	// generatedPasswordBytes is the randomness of a generated root password;
	// it is written as unpadded base64url (32 characters, well under the 72
	// bytes bcrypt takes).
	generatedPasswordBytes = 24
	// seedAttemptInterval paces Seeder.Run between attempts (one second).
	seedAttemptInterval = time.Second
	// nodeActorPrefix names the node itself as the actor of the seed
	// (ports.AuditEvent: "node:<id>").
	nodeActorPrefix = "node:"
	// auditNameMaxBytes bounds how much of a client-supplied username an
	// audit subject repeats when the name breaks the username rule.
	auditNameMaxBytes = 64
)
