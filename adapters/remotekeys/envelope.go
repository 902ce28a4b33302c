package remotekeys

import (
	"crypto/sha512"
	"crypto/subtle"
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// An envelope (meta.RemoteCredential.SealedPassword) is, byte by byte
// (internals.md §7.6):
//
//	offset  size    field
//	0       1       format version, envelopeFormatV1 (1)
//	1       8       key id, raw; its lowercase hex is the key version
//	9       12      nonce, random per seal
//	21      n + 16  AES-256-GCM ciphertext of the n-byte password, then tag
//
// The associated data (see associatedData) is not carried: the opener
// rebuilds it from the remote's record. A 24-72 byte password makes a 61-109
// byte envelope.

// seal builds the envelope of password under ks, bound to b.
func seal(ks *keySet, b ports.RemoteBinding, password []byte) []byte {
	env := make([]byte, 0, envelopeMinBytes+len(password))
	env = append(env, envelopeFormatV1)
	env = append(env, ks.keyID[:]...)
	// The random-nonce AEAD prepends its fresh 12-byte nonce.
	return ks.aead.Seal(env, nil, password, associatedData(b))
}

// parseEnvelope checks the shape of env and returns the raw key id it names
// and the nonce, ciphertext and tag that follow it.
func parseEnvelope(env []byte) (keyID, sealed []byte, err error) {
	switch {
	case len(env) < envelopeMinBytes || len(env) > envelopeMaxBytes:
		return nil, nil, fmt.Errorf("envelope of %d bytes outside %d..%d: %w",
			len(env), envelopeMinBytes, envelopeMaxBytes, domain.ErrRemoteSealBroken)
	case env[0] != envelopeFormatV1:
		return nil, nil, fmt.Errorf("envelope format %d, want %d: %w", env[0], envelopeFormatV1, domain.ErrRemoteSealBroken)
	}
	return env[1:envelopeHeaderBytes], env[envelopeHeaderBytes:], nil
}

// unseal opens the nonce, ciphertext and tag under ks, bound to b, and
// checks the opened password against fingerprint. Every failure is
// domain.ErrRemoteSealBroken.
func unseal(ks *keySet, keyID, sealed []byte, b ports.RemoteBinding, fingerprint string) ([]byte, error) {
	if subtle.ConstantTimeCompare(keyID, ks.keyID[:]) != 1 {
		return nil, fmt.Errorf("envelope names another key than its credential: %w", domain.ErrRemoteSealBroken)
	}
	password, err := ks.aead.Open(nil, nil, sealed, associatedData(b))
	if err != nil {
		return nil, fmt.Errorf("envelope does not authenticate: tampered, or the remote's name, id, url, username or CA changed since it was sealed: %w",
			domain.ErrRemoteSealBroken)
	}
	if subtle.ConstantTimeCompare([]byte(ks.fingerprint(b.ID, password)), []byte(fingerprint)) != 1 {
		clear(password)
		return nil, fmt.Errorf("fingerprint does not match the sealed password: %w", domain.ErrRemoteSealBroken)
	}
	return password, nil
}

// associatedData binds a seal to its remote (internals.md §7.6): aadPrefix,
// then name, id, canonical URL, username and trust anchor, each as a u32
// big-endian length and its bytes. The trust anchor is the SHA-512 of the CA
// bundle, or systemRootsMarker when the remote has none.
func associatedData(b ports.RemoteBinding) []byte {
	anchor := []byte(systemRootsMarker)
	if b.CAPEM != "" {
		sum := sha512.Sum512([]byte(b.CAPEM))
		anchor = sum[:]
	}
	aad := make([]byte, 0, len(aadPrefix)+5*lengthPrefixBytes+len(b.Name)+len(b.ID)+len(b.URL)+len(b.Username)+len(anchor))
	aad = append(aad, aadPrefix...)
	for _, field := range [][]byte{[]byte(b.Name), []byte(b.ID), []byte(b.URL), []byte(b.Username), anchor} {
		aad = appendField(aad, field)
	}
	return aad
}
