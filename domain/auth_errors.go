package domain

import "errors"

// Authentication and authorization outcomes (api.md §4). The HTTP adapter
// maps each to its status in its one error table.
var (
	// ErrUnauthenticated: no, malformed or wrong credentials (401
	// "authentication required", with WWW-Authenticate).
	ErrUnauthenticated = errors.New("domain: authentication required")
	// ErrAuthThrottled: the failed-attempt throttle refused a password check
	// (429 "too many failed authentication attempts").
	ErrAuthThrottled = errors.New("domain: too many failed authentication attempts")
	// ErrAuthUnavailable: the user store could not be read to check
	// credentials (500 "authentication unavailable").
	ErrAuthUnavailable = errors.New("domain: authentication unavailable")
	// ErrForbidden: authenticated but not permitted; its Refusal carries the
	// message the route table names (403).
	ErrForbidden = errors.New("domain: forbidden")
	// ErrUserNotFound: no account of that name (404 "not found").
	ErrUserNotFound = errors.New("domain: user not found")
	// ErrUserExists: an account of that name exists (409 "already exists").
	ErrUserExists = errors.New("domain: user already exists")
)
