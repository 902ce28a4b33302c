package ports

import "github.com/narad/narad/domain/meta"

// RemoteBinding is what a remote's sealed password is bound to
// (internals.md §7.6): a change of any field makes the seal fail to open.
// CAPEM is the remote's CA bundle ("" = system roots); the keyring binds to
// its SHA-512.
type RemoteBinding struct {
	Name     string
	ID       string
	URL      string
	Username string
	CAPEM    string
}

// RemoteKeyring seals and opens remote passwords under keys derived from the
// cluster secret and the cluster's salt (internals.md §7.6). It is the only
// place that touches credential cryptography. Safe for concurrent use;
// nothing it returns or logs holds key material, and it keeps no password.
type RemoteKeyring interface {
	// CanSeal reports nil when the current cluster secret passes the
	// strength rule; else an error wrapping domain.ErrRemoteSecret that
	// says why without repeating the secret.
	CanSeal() error
	// KeyVersion is the 16-hex key version of the current secret under
	// salt. Errors: domain.ErrRemoteSecret.
	KeyVersion(salt []byte) (string, error)
	// PreviousKeyVersion is the 16-hex key version of the previous secret
	// (NARAD_CLUSTER_SECRET_PREVIOUS) under salt; ok=false when no previous
	// secret is set or it fails the strength rule (it opens nothing then).
	PreviousKeyVersion(salt []byte) (version string, ok bool, err error)
	// Seal seals password (24-72 bytes) for b under the current key with a
	// fresh nonce and returns the envelope with its key version and
	// fingerprint. Errors: domain.ErrRemoteSecret.
	Seal(salt []byte, b RemoteBinding, password []byte) (meta.RemoteCredential, error)
	// Open returns the password of c, bound to b, under the current or the
	// previous key. Errors: domain.ErrRemoteKeyUnknown (neither secret
	// derives c.KeyVersion), domain.ErrRemoteSealBroken.
	Open(salt []byte, b RemoteBinding, c meta.RemoteCredential) ([]byte, error)
	// Fingerprint is the keyed fingerprint (12 hex) of password for remote
	// id under the current key. Errors: domain.ErrRemoteSecret.
	Fingerprint(salt []byte, id string, password []byte) (string, error)
}
