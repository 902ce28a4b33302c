package remotekeys

import (
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

var _ ports.RemoteKeyring = (*Keyring)(nil)

// Keyring seals and opens remote passwords (internals.md §7.6). It holds the
// decoded current and previous cluster secrets and the keys derived from
// them, never their text; it prints as a redacted summary under every fmt
// verb. Safe for concurrent use; the zero value is not usable, use New.
//
// A salt shorter than 16 bytes is refused with a plain error that wraps no
// domain sentinel: it is a corrupt metastore, not an unusable secret.
type Keyring struct {
	// Only pointers, so that printing a Keyring by reflection (as an
	// unexported field of another value) shows addresses, not bytes.
	current  *secretSlot
	previous *secretSlot // nil when no previous secret is set
}

// New returns the keyring of the secrets current (NARAD_CLUSTER_SECRET) and
// previous (NARAD_CLUSTER_SECRET_PREVIOUS, "" = none), as given in the
// environment: nothing is trimmed. A current secret failing the strength
// rule makes CanSeal, KeyVersion, Seal and Fingerprint fail; a previous one
// failing it is only unusable for Open.
func New(current, previous string) *Keyring {
	k := &Keyring{current: newSecretSlot(envCurrent, current)}
	if previous != "" {
		k.previous = newSecretSlot(envPrevious, previous)
	}
	return k
}

// CanSeal reports nil when the current secret passes the strength rule
// (CheckSecret); else an error wrapping domain.ErrRemoteSecret.
func (k *Keyring) CanSeal() error {
	if err := k.current.unsafe; err != nil {
		return fmt.Errorf("remotekeys: %w", err)
	}
	return nil
}

// KeyVersion is the 16-hex key version of the current secret under salt.
func (k *Keyring) KeyVersion(salt []byte) (string, error) {
	ks, err := k.currentKeys(salt)
	if err != nil {
		return "", fmt.Errorf("remotekeys: key version: %w", err)
	}
	return ks.version, nil
}

// PreviousKeyVersion is the 16-hex key version of the previous secret under
// salt; ok=false when no previous secret is set or it fails the strength
// rule. A plain error for a short salt.
func (k *Keyring) PreviousKeyVersion(salt []byte) (string, bool, error) {
	if k.previous == nil || k.previous.unsafe != nil {
		return "", false, nil
	}
	if err := checkSalt(salt); err != nil {
		return "", false, fmt.Errorf("remotekeys: previous key version: %w", err)
	}
	ks, err := k.previous.keys(salt)
	if err != nil {
		return "", false, fmt.Errorf("remotekeys: previous key version: %w", err)
	}
	return ks.version, true, nil
}

// Seal seals password (24-72 bytes) for b under the current key with a
// fresh nonce. Errors: domain.ErrRemoteSecret; a plain error for a short
// salt or a password of another length.
func (k *Keyring) Seal(salt []byte, b ports.RemoteBinding, password []byte) (meta.RemoteCredential, error) {
	ks, err := k.currentKeys(salt)
	if err != nil {
		return meta.RemoteCredential{}, fmt.Errorf("remotekeys: seal: %w", err)
	}
	if len(password) < passwordMinBytes || len(password) > passwordMaxBytes {
		return meta.RemoteCredential{}, fmt.Errorf("remotekeys: seal: a %d-byte password, want %d to %d bytes",
			len(password), passwordMinBytes, passwordMaxBytes)
	}
	return meta.RemoteCredential{
		SealedPassword: seal(ks, b, password),
		KeyVersion:     ks.version,
		Fingerprint:    ks.fingerprint(b.ID, password),
	}, nil
}

// Open returns the password of c, bound to b, under whichever of the
// current and previous secrets derives c.KeyVersion. Errors:
// domain.ErrRemoteKeyUnknown when neither usable secret derives it;
// domain.ErrRemoteSealBroken for a malformed envelope, an envelope naming
// another key than c.KeyVersion, a tampered byte, a changed binding or a
// fingerprint that does not match; a plain error for a short salt.
func (k *Keyring) Open(salt []byte, b ports.RemoteBinding, c meta.RemoteCredential) ([]byte, error) {
	if err := checkSalt(salt); err != nil {
		return nil, fmt.Errorf("remotekeys: open: %w", err)
	}
	keyID, sealed, err := parseEnvelope(c.SealedPassword)
	if err != nil {
		return nil, fmt.Errorf("remotekeys: open: %w", err)
	}
	ks, err := k.keysFor(salt, c.KeyVersion)
	if err != nil {
		return nil, fmt.Errorf("remotekeys: open: %w", err)
	}
	password, err := unseal(ks, keyID, sealed, b, c.Fingerprint)
	if err != nil {
		return nil, fmt.Errorf("remotekeys: open: %w", err)
	}
	return password, nil
}

// Fingerprint is the keyed fingerprint (12 hex) of password for remote id
// under the current key.
func (k *Keyring) Fingerprint(salt []byte, id string, password []byte) (string, error) {
	ks, err := k.currentKeys(salt)
	if err != nil {
		return "", fmt.Errorf("remotekeys: fingerprint: %w", err)
	}
	return ks.fingerprint(id, password), nil
}

// String summarizes which secrets are usable; it never shows a secret or a
// key. Format and GoString print the same under every verb.
func (k Keyring) String() string {
	previous := envPrevious + ": not set"
	if k.previous != nil {
		previous = k.previous.String()
	}
	return "remotekeys.Keyring{" + k.current.String() + ", " + previous + "}"
}

// GoString is String, for %#v.
func (k Keyring) GoString() string { return k.String() }

// Format writes String for every verb and flag.
func (k Keyring) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(k.String())) }

// currentKeys returns the current secret's keys under salt, checking the
// strength rule and the salt first.
func (k *Keyring) currentKeys(salt []byte) (*keySet, error) {
	if err := k.current.unsafe; err != nil {
		return nil, err
	}
	if err := checkSalt(salt); err != nil {
		return nil, err
	}
	return k.current.keys(salt)
}

// keysFor returns the keys of the usable secret whose key version under
// salt is version, current first.
func (k *Keyring) keysFor(salt []byte, version string) (*keySet, error) {
	for _, s := range []*secretSlot{k.current, k.previous} {
		if s == nil || s.unsafe != nil {
			continue
		}
		ks, err := s.keys(salt)
		if err != nil {
			return nil, err
		}
		if ks.version == version {
			return ks, nil
		}
	}
	return nil, fmt.Errorf("the credential's key version is derived by no usable secret (%s): %w",
		k.String(), domain.ErrRemoteKeyUnknown)
}

func checkSalt(salt []byte) error {
	if len(salt) < saltMinBytes {
		return fmt.Errorf("cluster salt of %d bytes, fewer than %d", len(salt), saltMinBytes)
	}
	return nil
}
