package fake

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

var _ ports.RemoteKeyring = (*RemoteKeyring)(nil)

// RemoteKeyring is a ports.RemoteKeyring for use-case tests. Its "seal" is
// no cipher: the envelope is the binding's digest followed by the password,
// so a changed binding fails to open, and the key version is a digest of
// the secret's name and the salt. Knobs: SetSecrets rotates, Refuse makes
// CanSeal and Seal fail.
type RemoteKeyring struct {
	mu       sync.Mutex
	current  string
	previous string
	refused  bool
}

// NewRemoteKeyring returns a keyring whose current secret is named current.
func NewRemoteKeyring(current string) *RemoteKeyring { return &RemoteKeyring{current: current} }

// SetSecrets replaces the current and previous secrets (a rotation).
func (k *RemoteKeyring) SetSecrets(current, previous string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.current, k.previous = current, previous
}

// Refuse makes the secret unusable (true) or usable again.
func (k *RemoteKeyring) Refuse(v bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.refused = v
}

func (k *RemoteKeyring) CanSeal() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.refused || k.current == "" {
		return fmt.Errorf("%w: the fake secret is refused", domain.ErrRemoteSecret)
	}
	return nil
}

func (k *RemoteKeyring) KeyVersion(salt []byte) (string, error) {
	if err := k.CanSeal(); err != nil {
		return "", err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return fakeKeyVersion(k.current, salt), nil
}

func (k *RemoteKeyring) PreviousKeyVersion(salt []byte) (string, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.previous == "" {
		return "", false, nil
	}
	return fakeKeyVersion(k.previous, salt), true, nil
}

func fakeKeyVersion(secret string, salt []byte) string {
	sum := sha256.Sum256(append([]byte(secret+"|"), salt...))
	return hex.EncodeToString(sum[:8])
}

func fakeBindingDigest(b ports.RemoteBinding) []byte {
	sum := sha256.Sum256([]byte(b.Name + "\x00" + b.ID + "\x00" + b.URL + "\x00" + b.Username + "\x00" + b.CAPEM))
	return sum[:]
}

func (k *RemoteKeyring) Seal(salt []byte, b ports.RemoteBinding, password []byte) (meta.RemoteCredential, error) {
	v, err := k.KeyVersion(salt)
	if err != nil {
		return meta.RemoteCredential{}, err
	}
	fp, _ := k.Fingerprint(salt, b.ID, password)
	env := append(fakeBindingDigest(b), password...)
	return meta.RemoteCredential{SealedPassword: env, KeyVersion: v, Fingerprint: fp}, nil
}

func (k *RemoteKeyring) Open(salt []byte, b ports.RemoteBinding, c meta.RemoteCredential) ([]byte, error) {
	k.mu.Lock()
	known := (k.current != "" && fakeKeyVersion(k.current, salt) == c.KeyVersion) ||
		(k.previous != "" && fakeKeyVersion(k.previous, salt) == c.KeyVersion)
	k.mu.Unlock()
	digest := fakeBindingDigest(b)
	switch {
	case !known:
		return nil, fmt.Errorf("%w: key %s", domain.ErrRemoteKeyUnknown, c.KeyVersion)
	case !bytes.HasPrefix(c.SealedPassword, digest):
		return nil, fmt.Errorf("%w: binding changed", domain.ErrRemoteSealBroken)
	}
	return bytes.Clone(c.SealedPassword[len(digest):]), nil
}

func (k *RemoteKeyring) Fingerprint(salt []byte, id string, password []byte) (string, error) {
	v, err := k.KeyVersion(salt)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append([]byte(v+"|"+id+"|"), password...))
	return hex.EncodeToString(sum[:6]), nil
}
