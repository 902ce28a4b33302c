package remotekeys

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/narad/narad/domain"
)

// CheckSecret applies the secret strength rule of internals.md §7.6 to s as
// given in the environment (nothing trimmed): s must look generated, either
// hex (with a digit and a letter) or padded standard base64 that re-encodes
// to exactly itself (with a digit, '+' or '/', and both letter cases),
// decoding to at least 32 bytes that are not one repeated value. A string
// made only of hex digits is read as hex. The error wraps
// domain.ErrRemoteSecret, says which rule failed and never repeats s.
func CheckSecret(s string) error {
	if _, err := decodeSecret(s); err != nil {
		return fmt.Errorf("remotekeys: %w", err)
	}
	return nil
}

// decodeSecret applies the strength rule and returns the secret's decoded
// bytes, the IKM of every derivation.
func decodeSecret(s string) ([]byte, error) {
	if s == "" {
		return nil, fmt.Errorf("%s is not set: %w", envCurrent, domain.ErrRemoteSecret)
	}
	var raw []byte
	var err error
	switch {
	case onlyOf(s, isHexDigit):
		raw, err = decodeHexSecret(s)
	case onlyOf(s, isBase64Char):
		raw, err = decodeBase64Secret(s)
	default:
		err = refuse("is neither hex nor padded standard base64 (a passphrase is refused)")
	}
	if err != nil {
		return nil, err
	}
	if len(raw) < secretMinBytes {
		return nil, refuse(fmt.Sprintf("decodes to %d bytes, fewer than %d", len(raw), secretMinBytes))
	}
	if repeatsOneByte(raw) {
		return nil, refuse("decodes to one repeated byte value")
	}
	return raw, nil
}

func decodeHexSecret(s string) ([]byte, error) {
	if len(s)%2 != 0 {
		return nil, refuse("is hex with an odd number of digits")
	}
	if !strings.ContainsAny(s, "0123456789") || !containsFunc(s, isLetter) {
		return nil, refuse("is hex without both a digit and a letter")
	}
	raw, err := hex.DecodeString(s)
	if err != nil {
		return nil, refuse("is not valid hex")
	}
	return raw, nil
}

func decodeBase64Secret(s string) ([]byte, error) {
	raw, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || base64.StdEncoding.EncodeToString(raw) != s {
		return nil, refuse("is not padded standard base64 that re-encodes to itself")
	}
	hasUpper := containsFunc(s, func(c byte) bool { return c >= 'A' && c <= 'Z' })
	hasLower := containsFunc(s, func(c byte) bool { return c >= 'a' && c <= 'z' })
	if !strings.ContainsAny(s, "0123456789+/") || !hasUpper || !hasLower {
		return nil, refuse("is base64 without a digit, '+' or '/', or without both letter cases")
	}
	return raw, nil
}

// refuse wraps the failed rule; reason must never hold the secret.
func refuse(reason string) error {
	return fmt.Errorf("cluster secret %s: %w", reason, domain.ErrRemoteSecret)
}

func repeatsOneByte(raw []byte) bool {
	for _, b := range raw[1:] {
		if b != raw[0] {
			return false
		}
	}
	return true
}

func onlyOf(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func containsFunc(s string, ok func(byte) bool) bool {
	return !onlyOf(s, func(c byte) bool { return !ok(c) })
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isLetter(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isBase64Char(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '='
}
