package remotekeys_test

import (
	"testing"

	"github.com/narad/narad/adapters/remotekeys"
)

// Ensure that the previous key version is the one the previous secret
// sealed under (so its seals can be counted after a rotation), and that a
// keyring without a usable previous secret reports none.
func TestPreviousKeyVersion(t *testing.T) {
	v, ok, err := remotekeys.New(secretC, secretA).PreviousKeyVersion(testSalt)
	if err != nil || !ok || v != katKeyVersion {
		t.Fatalf("previous key version %q ok=%v err=%v, want %s", v, ok, err, katKeyVersion)
	}
	if v, ok, err := remotekeys.New(secretC, secretA).PreviousKeyVersion(otherSalt); err != nil || !ok || v != katOtherSaltKey {
		t.Fatalf("under another salt: %q ok=%v err=%v, want %s", v, ok, err, katOtherSaltKey)
	}
	// The previous secret stays usable for counting when the current one
	// is not, as it does for Open.
	if v, ok, err := remotekeys.New(weakHex, secretA).PreviousKeyVersion(testSalt); err != nil || !ok || v != katKeyVersion {
		t.Fatalf("with an unusable current secret: %q ok=%v err=%v", v, ok, err)
	}
	for name, k := range map[string]*remotekeys.Keyring{
		"no previous secret":      remotekeys.New(secretC, ""),
		"previous fails the rule": remotekeys.New(secretC, weakHex),
	} {
		if v, ok, err := k.PreviousKeyVersion(testSalt); err != nil || ok || v != "" {
			t.Errorf("%s: %q ok=%v err=%v, want none", name, v, ok, err)
		}
	}
	_, ok, err = remotekeys.New(secretC, secretA).PreviousKeyVersion(testSalt[:15])
	if err == nil || ok || isSentinel(err) {
		t.Fatalf("15-byte salt: ok=%v err=%v, want a plain error", ok, err)
	}
}
