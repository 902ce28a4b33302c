package ports

import "context"

// PasswordHasher hashes and checks account passwords (bcrypt at cost 10 in
// production, internals.md §12.1). Both calls are CPU-bound and slow by
// design (tens of milliseconds); callers bound how many run at once. Safe
// for concurrent use; neither call keeps password.
type PasswordHasher interface {
	// Hash returns a new salted hash of password (1 to 72 bytes). Errors:
	// ctx.Err() if ctx ended before the work started, or the hasher's own.
	Hash(ctx context.Context, password []byte) ([]byte, error)
	// Matches reports whether password is the one hash was made from; a
	// malformed hash is an error, a wrong password is (false, nil).
	Matches(ctx context.Context, hash, password []byte) (bool, error)
}
