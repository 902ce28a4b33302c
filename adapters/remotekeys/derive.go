package remotekeys

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sync"
)

// keySet is what one (secret, salt) pair derives (internals.md §7.6): the
// AES-256-GCM cipher, the key id and the fingerprint key. It lives only in
// memory and prints redacted.
type keySet struct {
	aead           cipher.AEAD
	keyID          [keyIDBytes]byte
	version        string // hex of keyID
	fingerprintKey []byte
}

func (*keySet) String() string               { return "remotekeys.keySet{redacted}" }
func (k *keySet) GoString() string           { return k.String() }
func (k *keySet) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(k.String())) }

// deriveKeys expands ikm under salt into the three purpose keys. Nothing it
// derives is stored outside the returned keySet.
func deriveKeys(ikm, salt []byte) (*keySet, error) {
	aesKey, err := hkdf.Key(sha512.New, ikm, salt, labelAESKey, aesKeyBytes)
	if err != nil {
		return nil, fmt.Errorf("remotekeys: derive the cipher key: %w", err)
	}
	block, err := aes.NewCipher(aesKey)
	clear(aesKey)
	if err != nil {
		return nil, fmt.Errorf("remotekeys: derive the cipher key: %w", err)
	}
	aead, err := cipher.NewGCMWithRandomNonce(block)
	if err != nil {
		return nil, fmt.Errorf("remotekeys: derive the cipher key: %w", err)
	}
	id, err := hkdf.Key(sha512.New, ikm, salt, labelKeyID, keyIDBytes)
	if err != nil {
		return nil, fmt.Errorf("remotekeys: derive the key id: %w", err)
	}
	fpKey, err := hkdf.Key(sha512.New, ikm, salt, labelFingerprintKey, fingerprintKeyBytes)
	if err != nil {
		return nil, fmt.Errorf("remotekeys: derive the fingerprint key: %w", err)
	}
	ks := &keySet{aead: aead, version: hex.EncodeToString(id), fingerprintKey: fpKey}
	copy(ks.keyID[:], id)
	return ks, nil
}

// fingerprint is the first fingerprintBytes of HMAC-SHA-512 under the
// fingerprint key over (u32 len + id, u32 len + password), as 12 hex
// (internals.md §7.6).
func (k *keySet) fingerprint(id string, password []byte) string {
	m := hmac.New(sha512.New, k.fingerprintKey)
	m.Write(appendField(nil, []byte(id)))
	m.Write(appendField(nil, password))
	return hex.EncodeToString(m.Sum(nil)[:fingerprintBytes])
}

// secretSlot is one configured secret: its decoded bytes when it passes the
// strength rule, else why it does not, and the key sets derived from it,
// cached per salt. It never holds the secret's text and prints redacted.
type secretSlot struct {
	env    string // which variable it came from, for messages
	ikm    []byte
	unsafe error // nil when usable

	mu    sync.Mutex
	cache map[string]*keySet // by salt
}

func newSecretSlot(env, secret string) *secretSlot {
	ikm, err := decodeSecret(secret)
	if err != nil {
		return &secretSlot{env: env, unsafe: err}
	}
	return &secretSlot{env: env, ikm: ikm, cache: make(map[string]*keySet, cacheMaxSalts)}
}

func (s *secretSlot) String() string {
	if s.unsafe != nil {
		return s.env + ": unusable"
	}
	return s.env + ": usable"
}
func (s *secretSlot) GoString() string           { return s.String() }
func (s *secretSlot) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.String())) }

// keys returns the key set of this secret under salt, deriving it on the
// first use of salt. The caller has checked s.unsafe and the salt.
func (s *secretSlot) keys(salt []byte) (*keySet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ks, ok := s.cache[string(salt)]; ok {
		return ks, nil
	}
	ks, err := deriveKeys(s.ikm, salt)
	if err != nil {
		return nil, err
	}
	if len(s.cache) >= cacheMaxSalts {
		clear(s.cache)
	}
	s.cache[string(salt)] = ks
	return ks, nil
}

// appendField appends b as a big-endian u32 length then its bytes. Every
// field of a remote is bounded far below 4 GiB (internals.md §7.1; the CA
// bundle is hashed first).
func appendField(dst, b []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}
