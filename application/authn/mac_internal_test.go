package authn

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"testing"
)

// ensure that the allocation-free credential MAC is HMAC-SHA256 as
// crypto/hmac computes it, for every password length up to and past 72.
func TestCredentialIsHMACSHA256(t *testing.T) {
	k := newMACKey()
	for n := range passwordMaxBytes + 10 {
		pw := bytes.Repeat([]byte{byte('a' + n%26)}, n)
		m := hmac.New(sha256.New, k.key[:])
		m.Write(pw)
		got := k.sum(pw)
		if !hmac.Equal(got[:], m.Sum(nil)) {
			t.Fatalf("%d-byte password: MAC differs from crypto/hmac", n)
		}
	}
	if a, b := newMACKey(), newMACKey(); a.key == b.key {
		t.Fatal("two keys are equal: not random")
	}
}
