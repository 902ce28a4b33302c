package httpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// ErrBadRemoteName is returned, before any request, for a remote name that
// cannot be a path segment of /v1/remotes/{name}: empty, "." or "..".
var ErrBadRemoteName = errors.New("httpclient: bad remote name")

// Remote is the remote object of api.md §2.18; it never holds the password.
type Remote struct {
	Name              string         `json:"name"`
	ID                string         `json:"id"`
	URL               string         `json:"url"`
	Username          string         `json:"username"`
	Password          RemotePassword `json:"password"`
	CredentialVersion int64          `json:"credential_version"`
	CAPEMSHA512       string         `json:"ca_pem_sha512,omitempty"`
	Limits            RemoteLimits   `json:"limits"`
	Revision          int64          `json:"revision"`
	CreatedAt         string         `json:"created_at,omitempty"`
	CreatedBy         string         `json:"created_by,omitempty"`
	Links             []string       `json:"links,omitempty"`
	Nodes             []RemoteNode   `json:"nodes,omitempty"`
}

// RemotePassword describes the stored password without revealing it.
type RemotePassword struct {
	Fingerprint string `json:"fingerprint"`
	SetAt       string `json:"set_at,omitempty"`
	SetBy       string `json:"set_by,omitempty"`
	KeyVersion  string `json:"key_version,omitempty"`
}

// RemoteLimits are a remote's limits as the server holds them.
type RemoteLimits struct {
	MaxInFlight       int    `json:"max_in_flight"`
	RequestTimeoutMs  int64  `json:"request_timeout_ms"`
	IdleConnTimeoutMs int64  `json:"idle_conn_timeout_ms"`
	ConnMaxAgeMs      int64  `json:"conn_max_age_ms"`
	CheckIntervalMs   int64  `json:"check_interval_ms"`
	Compression       string `json:"compression"`
}

// RemoteNode is one member's view of a remote's credential.
type RemoteNode struct {
	Node               string `json:"node"`
	State              string `json:"state"`
	CredentialVersion  int64  `json:"credential_version,omitempty"`
	KeyVersion         string `json:"key_version,omitempty"`
	Fingerprint        string `json:"fingerprint,omitempty"`
	LastOKAt           string `json:"last_ok_at,omitempty"`
	LastError          string `json:"last_error,omitempty"`
	ServerCertNotAfter string `json:"server_cert_not_after,omitempty"`
	RTTMs              int64  `json:"rtt_ms,omitempty"`
}

// RemoteLimitsChange is the limits of a create or change request: nil fields
// are left out (the server default, or the value kept).
type RemoteLimitsChange struct {
	MaxInFlight       *int    `json:"max_in_flight,omitempty"`
	RequestTimeoutMs  *int64  `json:"request_timeout_ms,omitempty"`
	IdleConnTimeoutMs *int64  `json:"idle_conn_timeout_ms,omitempty"`
	ConnMaxAgeMs      *int64  `json:"conn_max_age_ms,omitempty"`
	CheckIntervalMs   *int64  `json:"check_interval_ms,omitempty"`
	Compression       *string `json:"compression,omitempty"`
}

// Empty reports whether no limit is set.
func (l RemoteLimitsChange) Empty() bool { return l == RemoteLimitsChange{} }

// NewRemote is the create request of POST /v1/remotes. CAPEM and Limits are
// left out when empty.
type NewRemote struct {
	Name     string              `json:"name"`
	URL      string              `json:"url"`
	Username string              `json:"username"`
	Password string              `json:"password"`
	CAPEM    string              `json:"ca_pem,omitempty"`
	Limits   *RemoteLimitsChange `json:"limits,omitempty"`
}

// RemoteChange is the body of PATCH /v1/remotes/{name}: nil fields keep
// their value. CAPEM pointing at "" goes back to the system roots. A new
// URL, Username or CAPEM needs Password too.
type RemoteChange struct {
	URL      *string             `json:"url,omitempty"`
	Username *string             `json:"username,omitempty"`
	Password *string             `json:"password,omitempty"`
	CAPEM    *string             `json:"ca_pem,omitempty"`
	Limits   *RemoteLimitsChange `json:"limits,omitempty"`
}

// RemoteList is the answer of GET /v1/remotes.
type RemoteList struct {
	Allowlist    string     `json:"allowlist"`
	Key          *RemoteKey `json:"key,omitempty"`
	Remotes      []Remote   `json:"remotes"`
	Lingering    []string   `json:"lingering"`
	NotAnswering []string   `json:"not_answering"`
}

// RemoteKey is the current sealing key; absent before the first remote.
type RemoteKey struct {
	KeyVersion    string `json:"key_version"`
	FirstSealedAt string `json:"first_sealed_at,omitempty"`
	AgeSeconds    int64  `json:"age_seconds"`
}

// RemoteTestSpec is the body of POST /v1/remotes/{name}/test: Source, a
// local parent, adds the schema, source and loop checks.
type RemoteTestSpec struct {
	Topic  string `json:"topic"`
	Source string `json:"source,omitempty"`
}

// RemoteTest is a test's verdict; a failed check is a 200 with Result "fail".
type RemoteTest struct {
	Remote string         `json:"remote"`
	Result string         `json:"result"`
	Class  string         `json:"class,omitempty"`
	Checks []MemberReport `json:"checks"`
}

// Passed reports whether every check passed.
func (t RemoteTest) Passed() bool { return t.Result == "pass" }

// Reencrypted is the answer of POST /v1/cluster/reencrypt-remotes.
type Reencrypted struct {
	KeyVersion     string          `json:"key_version"`
	Reencrypted    []string        `json:"reencrypted"`
	AlreadyCurrent []string        `json:"already_current"`
	Failed         []ReencryptFail `json:"failed"`
}

// ReencryptFail is a remote that could not be re-sealed, with a reason
// such as key_unknown or open_failed.
type ReencryptFail struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// CreateRemote registers a remote (201) and returns it.
func (c *Client) CreateRemote(ctx context.Context, r NewRemote) (*Remote, error) {
	var out Remote
	if err := c.sendJSON(ctx, http.MethodPost, "/v1/remotes", r, &out); err != nil {
		return nil, remoteRefusal(err)
	}
	return &out, nil
}

// UpdateRemote changes a remote (200) and returns it.
func (c *Client) UpdateRemote(ctx context.Context, name string, change RemoteChange) (*Remote, error) {
	path, err := remotePath(name, "")
	if err != nil {
		return nil, err
	}
	var out Remote
	if err := c.sendJSON(ctx, http.MethodPatch, path, change, &out); err != nil {
		return nil, remoteRefusal(err)
	}
	return &out, nil
}

// DeleteRemote deletes a remote (204); force=true deletes it even while
// remote children use it, which then hold in state remote_missing. A
// refusal naming the links is a *RemoteRefusal.
func (c *Client) DeleteRemote(ctx context.Context, name string, force bool) error {
	path, err := remotePath(name, "")
	if err != nil {
		return err
	}
	var q url.Values
	if force {
		q = url.Values{"force": {"true"}}
	}
	_, err = c.do(ctx, request{method: http.MethodDelete, path: path, query: q})
	return remoteRefusal(err)
}

// ListRemotes lists the remotes; nodes=false skips asking the members for
// their credential state (nodes=false on the query).
func (c *Client) ListRemotes(ctx context.Context, nodes bool) (*RemoteList, error) {
	var out RemoteList
	if err := c.getJSON(ctx, "/v1/remotes", nodesQuery(nodes), &out); err != nil {
		return nil, err
	}
	if out.Remotes == nil {
		out.Remotes = []Remote{}
	}
	return &out, nil
}

// GetRemote returns one remote, with the members' view unless nodes is false.
func (c *Client) GetRemote(ctx context.Context, name string, nodes bool) (*Remote, error) {
	path, err := remotePath(name, "")
	if err != nil {
		return nil, err
	}
	var out Remote
	if err := c.getJSON(ctx, path, nodesQuery(nodes), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TestRemote runs the attach checks against a remote topic, writing
// nothing. A failed check is a verdict, not an error.
func (c *Client) TestRemote(ctx context.Context, name string, spec RemoteTestSpec) (*RemoteTest, error) {
	path, err := remotePath(name, "/test")
	if err != nil {
		return nil, err
	}
	var out RemoteTest
	if err := c.sendJSON(ctx, http.MethodPost, path, spec, &out); err != nil {
		return nil, remoteRefusal(err)
	}
	if out.Result != "pass" && out.Result != "fail" {
		return nil, fmt.Errorf("POST %s: result %q: %w", path, out.Result, ErrMalformedReply)
	}
	return &out, nil
}

// ReencryptRemotes re-seals every remote password under the current key
// (sending {}); remotes that could not be re-sealed are listed in Failed.
func (c *Client) ReencryptRemotes(ctx context.Context) (*Reencrypted, error) {
	var out Reencrypted
	if err := c.sendJSON(ctx, http.MethodPost, "/v1/cluster/reencrypt-remotes", struct{}{}, &out); err != nil {
		return nil, remoteRefusal(err)
	}
	return &out, nil
}

func nodesQuery(nodes bool) url.Values {
	if nodes {
		return nil
	}
	return url.Values{"nodes": {"false"}}
}

// remotePath is /v1/remotes/<escaped name><suffix>.
func remotePath(name, suffix string) (string, error) {
	if name == "" || name == "." || name == ".." {
		return "", fmt.Errorf("%w: %q", ErrBadRemoteName, name)
	}
	return "/v1/remotes/" + url.PathEscape(name) + suffix, nil
}
