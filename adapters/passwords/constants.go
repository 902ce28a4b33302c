package passwords

// Bcrypt parameters (internals.md §12.1; api.md §2.16).
const (
	// Cost is the bcrypt work factor of every new hash.
	Cost = 10
	// PasswordMaxBytes is bcrypt's input limit; longer passwords are refused,
	// never truncated.
	PasswordMaxBytes = 72
)
