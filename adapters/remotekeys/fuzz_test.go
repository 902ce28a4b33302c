package remotekeys_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/narad/narad/adapters/remotekeys"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// katEnvelopeC is password1 sealed by secretC under testSalt for
// testBinding(). The fuzz seeds are pinned, not sealed afresh: fuzz workers
// run in other processes, where a fresh seal's nonce would differ.
const (
	katEnvelopeC = "01ce18be89842c142fafff8e461219e7f2233c2e811834d1e166341024e12f04" +
		"bf0929ff06ab1788aa886b581731f32cf2ab1fe6dd86365c72446a022b2b6f24b5d7"
	katFingerprintC = "700472116b3b"
)

// FuzzOpen feeds arbitrary envelopes, under the current or the previous key
// version, to Open: it must never panic, and anything but a genuine seal must
// fail with ErrRemoteSealBroken or ErrRemoteKeyUnknown.
func FuzzOpen(f *testing.F) {
	k := remotekeys.New(secretC, secretA)
	genuine := map[string]meta.RemoteCredential{}
	for _, c := range []meta.RemoteCredential{
		{SealedPassword: mustHex(f, katEnvelope), KeyVersion: katKeyVersion, Fingerprint: katFingerprint},
		{SealedPassword: mustHex(f, katEnvelopeC), KeyVersion: katOtherSecretKey, Fingerprint: katFingerprintC},
	} {
		genuine[string(c.SealedPassword)] = c
		f.Add(c.SealedPassword, false)
		f.Add(c.SealedPassword, true)
		f.Add(c.SealedPassword[:len(c.SealedPassword)-1], false)
	}
	f.Add([]byte{}, false)
	f.Add([]byte{1}, true)
	f.Add(bytes.Repeat([]byte{1}, 61), false)
	f.Add(bytes.Repeat([]byte{0xff}, 1025), false)

	f.Fuzz(func(t *testing.T, env []byte, previousKey bool) {
		c := meta.RemoteCredential{SealedPassword: env, KeyVersion: katOtherSecretKey, Fingerprint: "000000000000"}
		if previousKey {
			c.KeyVersion = katKeyVersion
		}
		g, isGenuine := genuine[string(env)]
		if isGenuine {
			c.Fingerprint = g.Fingerprint
		}
		got, err := k.Open(testSalt, testBinding(), c)
		if err == nil {
			if !isGenuine || g.KeyVersion != c.KeyVersion || string(got) != password1 {
				t.Fatalf("opened a forged envelope % x to %q", env, got)
			}
			return
		}
		if !errors.Is(err, domain.ErrRemoteSealBroken) && !errors.Is(err, domain.ErrRemoteKeyUnknown) {
			t.Fatalf("open % x: %v, want a remote sentinel", env, err)
		}
		if isGenuine && g.KeyVersion == c.KeyVersion {
			t.Fatalf("a genuine seal did not open: %v", err)
		}
	})
}
