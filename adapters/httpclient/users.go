package httpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// ErrBadUsername is returned, before any request, for a username that cannot
// be a path segment of /v1/users/{username}: empty, "." or "..".
var ErrBadUsername = errors.New("httpclient: bad username")

// Grant is one permission of a user (api.md §2.16, §4.3): an action and the
// topic patterns it covers. Admin grants carry no patterns.
type Grant struct {
	Action   string   `json:"action"`
	Patterns []string `json:"patterns,omitempty"`
}

// User is the user object of api.md §2.16; it never holds a password.
type User struct {
	Username    string  `json:"username"`
	Grants      []Grant `json:"grants,omitempty"`
	Root        bool    `json:"root,omitempty"`
	CreatedAtMs int64   `json:"created_at_ms,omitempty"`
	UpdatedAtMs int64   `json:"updated_at_ms,omitempty"`
}

// NewUser is the create request of POST /v1/users. Grants are left out when
// empty.
type NewUser struct {
	Username string  `json:"username"`
	Password string  `json:"password"`
	Grants   []Grant `json:"grants,omitempty"`
}

// PasswordChange is the body of PUT /v1/users/{username}/password. Current
// is needed only when a non-admin changes their own password, and is left
// out when empty.
type PasswordChange struct {
	New     string `json:"new_password"`
	Current string `json:"current_password,omitempty"`
}

// CreateUser creates a user (201) and returns it.
func (c *Client) CreateUser(ctx context.Context, u NewUser) (*User, error) {
	var out User
	if err := c.sendJSON(ctx, http.MethodPost, "/v1/users", u, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListUsers returns every user, ordered by username by the server; an empty
// list is an empty, non-nil slice.
func (c *Client) ListUsers(ctx context.Context) ([]User, error) {
	var out []User
	if err := c.getJSON(ctx, "/v1/users", nil, &out); err != nil {
		return nil, err
	}
	if out == nil {
		out = []User{}
	}
	return out, nil
}

// User returns one user.
func (c *Client) User(ctx context.Context, username string) (*User, error) {
	path, err := userPath(username, "")
	if err != nil {
		return nil, err
	}
	var out User
	if err := c.getJSON(ctx, path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteUser deletes a user (204).
func (c *Client) DeleteUser(ctx context.Context, username string) error {
	path, err := userPath(username, "")
	if err != nil {
		return err
	}
	_, err = c.do(ctx, request{method: http.MethodDelete, path: path})
	return err
}

// SetGrants replaces every grant of a user (200) and returns the user; an
// empty list removes them all.
func (c *Client) SetGrants(ctx context.Context, username string, grants []Grant) (*User, error) {
	path, err := userPath(username, "/grants")
	if err != nil {
		return nil, err
	}
	if grants == nil {
		grants = []Grant{}
	}
	body := struct {
		Grants []Grant `json:"grants"`
	}{grants}
	var out User
	if err := c.sendJSON(ctx, http.MethodPut, path, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ChangePassword sets a user's password (204). Grants are untouched.
func (c *Client) ChangePassword(ctx context.Context, username string, change PasswordChange) error {
	path, err := userPath(username, "/password")
	if err != nil {
		return err
	}
	return c.sendJSON(ctx, http.MethodPut, path, change, nil)
}

// userPath is /v1/users/<escaped username><suffix>.
func userPath(username, suffix string) (string, error) {
	if username == "" || username == "." || username == ".." {
		return "", fmt.Errorf("%w: %q", ErrBadUsername, username)
	}
	return "/v1/users/" + url.PathEscape(username) + suffix, nil
}
