package passwords

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/crypto/bcrypt"

	"github.com/narad/narad/ports"
)

// ErrPassword reports a password Hash refuses: empty or over
// PasswordMaxBytes.
var ErrPassword = errors.New("passwords: password must be 1 to 72 bytes")

var _ ports.PasswordHasher = (*Hasher)(nil)

// Hasher hashes and checks passwords with bcrypt. The zero value is ready;
// safe for concurrent use.
type Hasher struct{}

// New returns a bcrypt Hasher at Cost.
func New() *Hasher { return &Hasher{} }

// Hash returns a new salted bcrypt hash of password at Cost. Errors:
// ErrPassword, ctx.Err() when ctx ended before the work started, or
// bcrypt's own.
func (*Hasher) Hash(ctx context.Context, password []byte) ([]byte, error) {
	if len(password) == 0 || len(password) > PasswordMaxBytes {
		return nil, fmt.Errorf("passwords: hash a %d-byte password: %w", len(password), ErrPassword)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("passwords: hash: %w", err)
	}
	h, err := bcrypt.GenerateFromPassword(password, Cost)
	if err != nil {
		return nil, fmt.Errorf("passwords: hash: %w", err)
	}
	return h, nil
}

// Matches reports whether password is the one hash was made from. A wrong
// password, including one over PasswordMaxBytes (it can never have been
// hashed here), is (false, nil); a malformed hash is an error, and so is
// ctx.Err() when ctx ended before the work started.
func (*Hasher) Matches(ctx context.Context, hash, password []byte) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("passwords: check: %w", err)
	}
	if len(password) > PasswordMaxBytes {
		// Still tell a malformed hash apart, without running bcrypt.
		if _, err := bcrypt.Cost(hash); err != nil {
			return false, fmt.Errorf("passwords: check: malformed hash: %w", err)
		}
		return false, nil
	}
	err := bcrypt.CompareHashAndPassword(hash, password)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, bcrypt.ErrMismatchedHashAndPassword):
		return false, nil
	}
	return false, fmt.Errorf("passwords: check: malformed hash: %w", err)
}
