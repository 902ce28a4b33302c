package authn

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
)

// credential is the HMAC-SHA256 of a plaintext password under the
// process's key: what the caches and flights are keyed by, never the
// plaintext.
type credential [sha256.Size]byte

// equal compares two credentials in constant time.
func (c *credential) equal(o *credential) bool {
	return subtle.ConstantTimeCompare(c[:], o[:]) == 1
}

// macKey is the per-process HMAC key with its two pads precomputed.
type macKey struct {
	key        [credentialMACKeyBytes]byte
	ipad, opad [credentialMACBlockSize]byte
}

// newMACKey draws a random key (crypto/rand never fails).
func newMACKey() *macKey {
	k := &macKey{}
	_, _ = rand.Read(k.key[:])
	for i := range credentialMACBlockSize {
		var b byte
		if i < len(k.key) {
			b = k.key[i]
		}
		k.ipad[i], k.opad[i] = b^0x36, b^0x5c
	}
	return k
}

// sum is HMAC-SHA256(key, password) as RFC 2104 defines it,
// H((K^opad) || H((K^ipad) || password)), over stack buffers so a cache hit
// allocates nothing. Passwords over passwordMaxBytes (refused before this is
// called) go through crypto/hmac instead of being cut.
func (k *macKey) sum(password []byte) credential {
	if len(password) > passwordMaxBytes {
		m := hmac.New(sha256.New, k.key[:])
		m.Write(password)
		var c credential
		m.Sum(c[:0])
		return c
	}
	var inner [credentialMACBlockSize + passwordMaxBytes]byte
	copy(inner[:], k.ipad[:])
	n := credentialMACBlockSize + copy(inner[credentialMACBlockSize:], password)
	innerSum := sha256.Sum256(inner[:n])
	clear(inner[:]) // the plaintext's copy
	var outer [credentialMACBlockSize + sha256.Size]byte
	copy(outer[:], k.opad[:])
	copy(outer[credentialMACBlockSize:], innerSum[:])
	return sha256.Sum256(outer[:])
}
