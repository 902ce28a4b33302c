// Package passwords is the ports.PasswordHasher of production: bcrypt
// (golang.org/x/crypto/bcrypt) at cost 10 (internals.md §12.1).
//
// It never truncates: a password over bcrypt's 72-byte input limit is refused
// by Hash and can never match. It keeps no password after a call returns and
// bounds nothing itself; callers decide how many hashes run at once.
package passwords
