package remotekeys_test

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/remotekeys"
	"github.com/narad/narad/domain"
)

func TestSecretStrengthRule(t *testing.T) {
	for _, tc := range []struct {
		name   string
		secret string
		reason string // "" = accepted; else a substring of the error
	}{
		{"valid 64 hex", secretA, ""},
		{"valid uppercase hex", strings.ToUpper(secretC), ""},
		{"valid 44-char base64 of 32 random bytes", secretB, ""},
		{"valid 88-char base64 of 64 bytes", "5Vmu+sb+GwBtNJer7iZJzrcfzO6nP9IjeCM4qynAjluIeDa4BjSdWs6QMMacqRhQsBxGiCXQI1ml+u5yYd5BXg==", ""},
		{"empty", "", "NARAD_CLUSTER_SECRET is not set"},
		{"hex too short (31 bytes)", secretA[:62], "decodes to 31 bytes"},
		{"hex too short (16 bytes)", weakHex, "decodes to 16 bytes"},
		{"hex without a letter", strings.Repeat("0123456789", 6) + "0123", "without both a digit and a letter"},
		{"hex without a digit", strings.Repeat("abcdef", 10) + "abcd", "without both a digit and a letter"},
		{"hex with an odd number of digits", secretA + "a", "odd number"},
		{"hex of one repeated byte", strings.Repeat("a1", 32), "one repeated byte"},
		{"hex with a trailing newline", secretA + "\n", "neither hex nor padded standard base64"},
		{"hex with a leading space", " " + secretA, "neither hex nor padded standard base64"},
		{"a passphrase", "correct horse battery staple and then some more words", "neither hex nor padded standard base64"},
		{"base64 without its padding", strings.TrimRight(secretB, "="), "re-encodes to itself"},
		{"base64 with a trailing newline", secretB + "\n", "neither hex nor padded standard base64"},
		{"base64 with non-zero spare bits", secretB[:42] + "d=", "re-encodes to itself"},
		{"url-safe base64", strings.NewReplacer("+", "-", "/", "_").Replace(secretB), "neither hex nor padded standard base64"},
		{"base64 of 32 repeated bytes", "Dg4ODg4ODg4ODg4ODg4ODg4ODg4ODg4ODg4ODg4ODg4=", "one repeated byte"},
		{"base64 of 31 bytes", "6x4z6KgbaXt1hVr2v828v3y73p+Ulizq7B7YryH1pQ==", "decodes to 31 bytes"},
		{"base64 without '+', '/' or a digit", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopE=", "without a digit, '+' or '/'"},
		{"base64 without an uppercase letter", "abcdefghijklmnopqrstuvwxyz0123456789+/abcdc=", "both letter cases"},
		{"base64 without a lowercase letter", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/ABCDE=", "both letter cases"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := remotekeys.CheckSecret(tc.secret)
			if keyringErr := remotekeys.New(tc.secret, "").CanSeal(); (err == nil) != (keyringErr == nil) {
				t.Fatalf("CheckSecret %v but CanSeal %v", err, keyringErr)
			}
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			wantErr(t, err, domain.ErrRemoteSecret)
			if !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("error %q does not say %q", err, tc.reason)
			}
			assertNoSecret(t, err.Error(), tc.secret)
		})
	}
}

// assertNoSecret fails when msg holds secret, its trimmed text or the hex of
// what it decodes to.
func assertNoSecret(t *testing.T, msg, secret string) {
	t.Helper()
	trimmed := strings.TrimSpace(secret)
	if len(trimmed) < 8 {
		return // too short to tell apart from ordinary words
	}
	forbidden := []string{trimmed}
	if raw, err := hex.DecodeString(trimmed); err == nil {
		forbidden = append(forbidden, string(raw))
	}
	if raw, err := base64.StdEncoding.DecodeString(trimmed); err == nil {
		forbidden = append(forbidden, hex.EncodeToString(raw), string(raw))
	}
	for _, bad := range forbidden {
		if bad != "" && strings.Contains(strings.ToLower(msg), strings.ToLower(bad)) {
			t.Fatalf("error %q repeats the secret", msg)
		}
	}
}
