package remotekeys_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Fixed secrets: they pass the strength rule and are used nowhere else.
const (
	secretA   = "0891398cddc8e9cbea87e4feb92f410d2fa7a7f150dc488feee702bbc2f37f3b"
	secretB   = "/KvAY8DwD44T1jZFrGHPq52oDV9i/qfVDswIYU0EZdc="
	secretC   = "b7c18518cf83e1dd02f637bc49cd6c76924069685fedc83cb613cdaf6b5c32a2"
	weakHex   = "0123456789abcdef0123456789abcdef"
	remoteID  = "0123456789abcdef"
	caPEM     = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	password1 = "correct horse battery staple!"
)

// testSalt is 32 bytes 0xa0..0xbf; otherSalt differs in its last byte.
var testSalt, otherSalt = func() ([]byte, []byte) {
	s := make([]byte, 32)
	for i := range s {
		s[i] = byte(0xa0 + i)
	}
	o := bytes.Clone(s)
	o[31] ^= 1
	return s, o
}()

func testBinding() ports.RemoteBinding {
	return ports.RemoteBinding{
		Name:     "dr-east",
		ID:       remoteID,
		URL:      "https://narad.example.com:8443/base",
		Username: "shipper",
		CAPEM:    caPEM,
	}
}

func mustSeal(t testing.TB, k ports.RemoteKeyring, b ports.RemoteBinding, password string) meta.RemoteCredential {
	t.Helper()
	c, err := k.Seal(testSalt, b, []byte(password))
	if err != nil {
		t.Fatalf("seal: %v", err)
	}
	return c
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantErr(t testing.TB, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want %v", err, want)
	}
}

// isSentinel reports whether err wraps any domain error of remotes.
func isSentinel(err error) bool {
	return errors.Is(err, domain.ErrRemoteSecret) || errors.Is(err, domain.ErrRemoteKeyUnknown) ||
		errors.Is(err, domain.ErrRemoteSealBroken)
}

func decodeStd(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
