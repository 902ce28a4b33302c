package remotes

import (
	"encoding/base64"
	"slices"
	"strings"
	"sync"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Credential cache states of a remote on one node (internals.md §7.6).
const (
	StateReady      = "ready"
	StateStale      = "stale"
	StateUnreadable = "credential_unreadable"
	StateInsecure   = "node_insecure"
	StateMissing    = "missing"
	StateUnknown    = "unknown"
)

// CacheDeps are the credential cache's ports.
type CacheDeps struct {
	Store     ports.MetadataAccess
	Keyring   ports.RemoteKeyring
	Transport ports.RemoteTransport
	// Secured is security.enabled: a node without it never opens a password.
	Secured bool
	// Decrypted counts one opened password (narad_remote_credential_decrypts_total);
	// nil counts nothing.
	Decrypted func(remote string)
}

// Cache holds one ready client per remote: the password opened once per
// credential version and turned into an Authorization header, with an HTTP
// client of the remote's own TLS config and pool. A limits-only change
// builds a new client without opening the password again. Safe for
// concurrent use.
type Cache struct {
	d       CacheDeps
	mu      sync.Mutex
	entries map[string]*entry // by remote name
}

type entry struct {
	remote meta.Remote // the record the entry was built from
	auth   string      // "Basic ...": the opened password lives only here
	client ports.RemoteClient
	state  string
}

// NewCache returns an empty cache.
func NewCache(d CacheDeps) *Cache { return &Cache{d: d, entries: map[string]*entry{}} }

// Client returns the client of r's current record, building it when the
// record moved; a nil client with the state when this node cannot send to
// r (an unreadable credential is tried again on the next call).
func (c *Cache) Client(r meta.Remote) (client ports.RemoteClient, state string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[r.Name]
	switch {
	case !c.d.Secured:
		return nil, StateInsecure
	case e != nil && e.state == StateReady && sameCredential(e.remote, r) && e.remote.Limits == r.Limits:
		return e.client, e.state
	case e != nil && sameCredential(e.remote, r) && e.auth != "":
		c.rebuildClient(e, r)
		return e.client, e.state
	}
	e = c.build(r)
	if old := c.entries[r.Name]; old != nil && old.client != nil {
		old.client.Close()
	}
	c.entries[r.Name] = e
	return e.client, e.state
}

// sameCredential reports whether a and b are one incarnation at one
// credential version with one binding: the opened password still fits.
func sameCredential(a, b meta.Remote) bool {
	return a.ID == b.ID && a.CredentialVersion == b.CredentialVersion && a.URL == b.URL &&
		a.Username == b.Username && a.CAPEM == b.CAPEM && a.KeyVersion == b.KeyVersion
}

// build opens r's password and builds its client.
func (c *Cache) build(r meta.Remote) *entry {
	e := &entry{remote: r, state: StateUnreadable}
	salt, found, err := c.d.Store.RemoteSalt()
	if err != nil || !found {
		return e
	}
	pw, err := c.d.Keyring.Open(salt, binding(r), meta.RemoteCredential{SealedPassword: r.SealedPassword, KeyVersion: r.KeyVersion, Fingerprint: r.Fingerprint})
	if err != nil {
		return e
	}
	if c.d.Decrypted != nil {
		c.d.Decrypted(r.Name)
	}
	e.auth = basicAuth(r.Username, pw)
	clear(pw)
	c.rebuildClient(e, r)
	return e
}

// rebuildClient replaces e's client with one for r's limits.
func (c *Cache) rebuildClient(e *entry, r meta.Remote) {
	if e.client != nil {
		e.client.Close()
	}
	e.remote, e.client, e.state = r, nil, StateUnreadable
	client, err := c.d.Transport.NewClient(ports.RemoteEndpoint{Name: r.Name, URL: r.URL, Authorization: e.auth, CAPEM: r.CAPEM, Limits: r.Limits})
	if err != nil {
		return
	}
	e.client, e.state = client, StateReady
}

func basicAuth(user string, pw []byte) string {
	raw := make([]byte, 0, len(user)+1+len(pw))
	raw = append(append(append(raw, user...), ':'), pw...)
	out := "Basic " + base64.StdEncoding.EncodeToString(raw)
	clear(raw)
	return out
}

// Sync drops the entries of remotes no longer in all (deleted, or
// recreated under another id) and closes their idle connections.
func (c *Cache) Sync(all []meta.Remote) {
	ids := make(map[string]string, len(all))
	for _, r := range all {
		ids[r.Name] = r.ID
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, e := range c.entries {
		if ids[name] != e.remote.ID {
			if e.client != nil {
				e.client.Close()
			}
			delete(c.entries, name)
		}
	}
}

// Held reports the entries this cache still holds for remotes that are
// not in all (deleted, or recreated under another id): what makes a
// deleted remote lingering on this node (api.md §2.18), sorted by name.
func (c *Cache) Held(all []meta.Remote) []ports.RemoteCredentialReport {
	ids := make(map[string]string, len(all))
	for _, r := range all {
		ids[r.Name] = r.ID
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []ports.RemoteCredentialReport
	for name, e := range c.entries {
		if id, ok := ids[name]; !ok || id != e.remote.ID {
			out = append(out, ports.RemoteCredentialReport{Remote: name, State: e.state, CredentialVersion: e.remote.CredentialVersion,
				KeyVersion: e.remote.KeyVersion, Fingerprint: e.remote.Fingerprint})
		}
	}
	slices.SortFunc(out, func(a, b ports.RemoteCredentialReport) int { return strings.Compare(a.Remote, b.Remote) })
	return out
}

// State is this node's credential state for r, as the remotes listing
// shows it.
func (c *Cache) State(r meta.Remote, self string) NodeState {
	out := NodeState{Node: self, State: StateMissing, LastError: "none"}
	if !c.d.Secured {
		out.State = StateInsecure
		return out
	}
	c.mu.Lock()
	e := c.entries[r.Name]
	c.mu.Unlock()
	if e == nil || e.remote.ID != r.ID {
		_, out.State = c.Client(r)
		c.mu.Lock()
		e = c.entries[r.Name]
		c.mu.Unlock()
	}
	if e == nil {
		return out
	}
	out.State, out.CredentialVersion, out.KeyVersion, out.Fingerprint = e.state, e.remote.CredentialVersion, e.remote.KeyVersion, e.remote.Fingerprint
	if e.remote.CredentialVersion < r.CredentialVersion {
		out.State = StateStale
	}
	return out
}

// Close closes every client's idle connections.
func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, e := range c.entries {
		if e.client != nil {
			e.client.Close()
		}
		delete(c.entries, name)
	}
}
