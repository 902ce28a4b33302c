package remotekeys_test

import (
	"bytes"
	"crypto/hkdf"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/narad/narad/adapters/remotekeys"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Known answers for secretA under testSalt (internals.md §7.6), checked once
// against an independent HKDF/HMAC/AES-GCM implementation. A change here
// makes every stored credential unreadable.
const (
	katKeyVersion      = "92a6f93d118d5cc7"
	katFingerprint     = "5848e2d9f290"
	katOtherSaltKey    = "45517a46b0e4bd9f" // secretA under otherSalt
	katOtherSecretKey  = "ce18be89842c142f" // secretC under testSalt
	katBase64SecretKey = "8cce76e60974f859" // secretB under testSalt
	// katEnvelope is password1 sealed by secretA under testSalt for
	// testBinding().
	katEnvelope = "0192a6f93d118d5cc71a00ca9e365f9ebefec12752f28088b41d5d4f36b87a41" +
		"3efd35e766780efc768377d8e4e5977778e9db94395d949129839caf1e698871e9ca"
)

func TestKnownAnswers(t *testing.T) {
	keyVersion := func(secret string, salt []byte) string {
		t.Helper()
		v, err := remotekeys.New(secret, "").KeyVersion(salt)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct{ name, got, want string }{
		{"key version", keyVersion(secretA, testSalt), katKeyVersion},
		{"key version under another salt", keyVersion(secretA, otherSalt), katOtherSaltKey},
		{"key version of another secret", keyVersion(secretC, testSalt), katOtherSecretKey},
		{"key version of a base64 secret", keyVersion(secretB, testSalt), katBase64SecretKey},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, tc.got, tc.want)
		}
	}
	fp, err := remotekeys.New(secretA, "").Fingerprint(testSalt, remoteID, []byte(password1))
	if err != nil || fp != katFingerprint {
		t.Errorf("fingerprint %q (%v), want %s", fp, err, katFingerprint)
	}
	c := meta.RemoteCredential{SealedPassword: mustHex(t, katEnvelope), KeyVersion: katKeyVersion, Fingerprint: katFingerprint}
	got, err := remotekeys.New(secretA, "").Open(testSalt, testBinding(), c)
	if err != nil || string(got) != password1 {
		t.Errorf("open the pinned envelope: %q, %v", got, err)
	}
}

func TestSealOpenRoundTrip(t *testing.T) {
	k := remotekeys.New(secretA, "")
	c := mustSeal(t, k, testBinding(), password1)
	if c.KeyVersion != katKeyVersion || c.Fingerprint != katFingerprint {
		t.Fatalf("credential key %s fingerprint %s, want %s %s", c.KeyVersion, c.Fingerprint, katKeyVersion, katFingerprint)
	}
	env := c.SealedPassword
	if env[0] != 1 || hex.EncodeToString(env[1:9]) != c.KeyVersion || len(env) != 1+8+12+len(password1)+16 {
		t.Fatalf("envelope layout: % x", env)
	}
	got, err := k.Open(testSalt, testBinding(), c)
	if err != nil || string(got) != password1 {
		t.Fatalf("open: %q, %v", got, err)
	}
	again := mustSeal(t, k, testBinding(), password1)
	if bytes.Equal(again.SealedPassword, c.SealedPassword) || bytes.Equal(again.SealedPassword[9:21], env[9:21]) {
		t.Fatal("two seals of one password share a nonce")
	}
	if again.Fingerprint != c.Fingerprint {
		t.Fatal("the fingerprint of one password changed between seals")
	}
}

func TestSystemRootsBindingRoundTrip(t *testing.T) {
	k := remotekeys.New(secretA, "")
	b := testBinding()
	b.CAPEM = ""
	got, err := k.Open(testSalt, b, mustSeal(t, k, b, password1))
	if err != nil || string(got) != password1 {
		t.Fatalf("open: %q, %v", got, err)
	}
}

func TestPasswordLengths(t *testing.T) {
	k := remotekeys.New(secretA, "")
	for _, n := range []int{24, 72} {
		p := bytes.Repeat([]byte{'p'}, n)
		c, err := k.Seal(testSalt, testBinding(), p)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if got, err := k.Open(testSalt, testBinding(), c); err != nil || !bytes.Equal(got, p) {
			t.Fatalf("%d bytes: open %q, %v", n, got, err)
		}
	}
	for _, n := range []int{0, 23, 73} {
		if _, err := k.Seal(testSalt, testBinding(), bytes.Repeat([]byte{'p'}, n)); err == nil {
			t.Fatalf("sealed a %d-byte password", n)
		}
	}
}

func TestEveryFlippedBitBreaksTheSeal(t *testing.T) {
	k := remotekeys.New(secretA, secretC)
	c := mustSeal(t, k, testBinding(), password1)
	for i := range c.SealedPassword {
		for bit := range 8 {
			tampered := c
			tampered.SealedPassword = bytes.Clone(c.SealedPassword)
			tampered.SealedPassword[i] ^= 1 << bit
			_, err := k.Open(testSalt, testBinding(), tampered)
			if !errors.Is(err, domain.ErrRemoteSealBroken) {
				t.Fatalf("byte %d bit %d flipped: %v, want ErrRemoteSealBroken", i, bit, err)
			}
		}
	}
}

func TestMalformedEnvelopesBreakTheSeal(t *testing.T) {
	k := remotekeys.New(secretA, "")
	c := mustSeal(t, k, testBinding(), password1)
	for name, env := range map[string][]byte{
		"empty":     nil,
		"header":    c.SealedPassword[:9],
		"truncated": c.SealedPassword[:len(c.SealedPassword)-1],
		"extended":  append(bytes.Clone(c.SealedPassword), 0),
		"oversized": make([]byte, 1025),
	} {
		bad := c
		bad.SealedPassword = env
		_, err := k.Open(testSalt, testBinding(), bad)
		if !errors.Is(err, domain.ErrRemoteSealBroken) {
			t.Errorf("%s: %v, want ErrRemoteSealBroken", name, err)
		}
	}
	bad := c
	bad.Fingerprint = "000000000000"
	if _, err := k.Open(testSalt, testBinding(), bad); !errors.Is(err, domain.ErrRemoteSealBroken) {
		t.Errorf("another fingerprint: %v, want ErrRemoteSealBroken", err)
	}
}

func TestChangedBindingBreaksTheSeal(t *testing.T) {
	k := remotekeys.New(secretA, "")
	c := mustSeal(t, k, testBinding(), password1)
	for name, change := range map[string]func(*ports.RemoteBinding){
		"name":         func(b *ports.RemoteBinding) { b.Name = "dr-west" },
		"id":           func(b *ports.RemoteBinding) { b.ID = "fedcba9876543210" },
		"url":          func(b *ports.RemoteBinding) { b.URL = "https://narad.example.com:8443/other" },
		"username":     func(b *ports.RemoteBinding) { b.Username = "shipper2" },
		"ca":           func(b *ports.RemoteBinding) { b.CAPEM += "\n" },
		"system roots": func(b *ports.RemoteBinding) { b.CAPEM = "" },
		"shifted":      func(b *ports.RemoteBinding) { b.Name, b.URL = b.Name+"h", b.URL[1:] },
	} {
		b := testBinding()
		change(&b)
		_, err := k.Open(testSalt, b, c)
		if !errors.Is(err, domain.ErrRemoteSealBroken) {
			t.Errorf("%s changed: %v, want ErrRemoteSealBroken", name, err)
		}
	}
	sysRoots := testBinding()
	sysRoots.CAPEM = ""
	b := testBinding()
	if _, err := k.Open(testSalt, b, mustSeal(t, k, sysRoots, password1)); !errors.Is(err, domain.ErrRemoteSealBroken) {
		t.Errorf("system roots to a CA: %v, want ErrRemoteSealBroken", err)
	}
}

func TestRotationOpensUnderThePreviousSecret(t *testing.T) {
	old := remotekeys.New(secretA, "")
	c := mustSeal(t, old, testBinding(), password1)

	rotated := remotekeys.New(secretC, secretA)
	got, err := rotated.Open(testSalt, testBinding(), c)
	if err != nil || string(got) != password1 {
		t.Fatalf("open under the previous secret: %q, %v", got, err)
	}
	resealed := mustSeal(t, rotated, testBinding(), password1)
	if resealed.KeyVersion != katOtherSecretKey || resealed.Fingerprint == c.Fingerprint {
		t.Fatalf("seal after rotation used key %s fingerprint %s", resealed.KeyVersion, resealed.Fingerprint)
	}
	if fp, _ := rotated.Fingerprint(testSalt, remoteID, []byte(password1)); fp != resealed.Fingerprint {
		t.Fatalf("fingerprint %s, want the current key's %s", fp, resealed.Fingerprint)
	}

	for name, k := range map[string]*remotekeys.Keyring{
		"neither":                  remotekeys.New(secretC, ""),
		"another previous":         remotekeys.New(secretC, secretB),
		"previous fails the rule":  remotekeys.New(secretC, weakHex),
		"only the salt is another": remotekeys.New(secretA, ""),
	} {
		salt := testSalt
		if name == "only the salt is another" {
			salt = otherSalt
		}
		_, err := k.Open(salt, testBinding(), c)
		wantErr(t, err, domain.ErrRemoteKeyUnknown)
	}

	renamed := c
	renamed.KeyVersion = katOtherSaltKey
	_, err = rotated.Open(testSalt, testBinding(), renamed)
	wantErr(t, err, domain.ErrRemoteKeyUnknown)
	swapped := c
	swapped.KeyVersion = katOtherSecretKey // derivable, but not the envelope's
	_, err = rotated.Open(testSalt, testBinding(), swapped)
	wantErr(t, err, domain.ErrRemoteSealBroken)
}

func TestWeakPreviousSecretLeavesTheCurrentWorking(t *testing.T) {
	k := remotekeys.New(secretA, "hunter2")
	if err := k.CanSeal(); err != nil {
		t.Fatal(err)
	}
	got, err := k.Open(testSalt, testBinding(), mustSeal(t, k, testBinding(), password1))
	if err != nil || string(got) != password1 {
		t.Fatalf("open: %q, %v", got, err)
	}
}

func TestUnusableCurrentSecretRefusesToSeal(t *testing.T) {
	for _, secret := range []string{"", weakHex, secretA + "\n"} {
		k := remotekeys.New(secret, secretA)
		wantErr(t, k.CanSeal(), domain.ErrRemoteSecret)
		_, err := k.KeyVersion(testSalt)
		wantErr(t, err, domain.ErrRemoteSecret)
		_, err = k.Seal(testSalt, testBinding(), []byte(password1))
		wantErr(t, err, domain.ErrRemoteSecret)
		_, err = k.Fingerprint(testSalt, remoteID, []byte(password1))
		wantErr(t, err, domain.ErrRemoteSecret)
	}
}

func TestShortSaltIsRefused(t *testing.T) {
	k := remotekeys.New(secretA, "")
	c := mustSeal(t, k, testBinding(), password1)
	short := testSalt[:15]
	_, err1 := k.KeyVersion(short)
	_, err2 := k.Seal(short, testBinding(), []byte(password1))
	_, err3 := k.Open(short, testBinding(), c)
	_, err4 := k.Fingerprint(short, remoteID, []byte(password1))
	for i, err := range []error{err1, err2, err3, err4} {
		if err == nil || isSentinel(err) {
			t.Errorf("call %d with a 15-byte salt: %v, want a plain error", i+1, err)
		}
	}
	if _, err := k.KeyVersion(testSalt[:16]); err != nil {
		t.Errorf("16-byte salt: %v", err)
	}
}

func TestManySaltsStayConsistent(t *testing.T) {
	k := remotekeys.New(secretA, "")
	first := map[byte]string{}
	for pass := range 2 {
		for i := range byte(10) {
			salt := bytes.Clone(testSalt)
			salt[0] = i
			v, err := k.KeyVersion(salt)
			if err != nil {
				t.Fatal(err)
			}
			if pass == 1 && v != first[i] {
				t.Fatalf("salt %d: key version %s then %s", i, first[i], v)
			}
			first[i] = v
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	k := remotekeys.New(secretA, secretC)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			salt := testSalt
			if g%2 == 1 {
				salt = otherSalt
			}
			for range 50 {
				c, err := k.Seal(salt, testBinding(), []byte(password1))
				if err != nil {
					t.Error(err)
					return
				}
				if got, err := k.Open(salt, testBinding(), c); err != nil || string(got) != password1 {
					t.Errorf("open: %q, %v", got, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestPrintingNeverShowsSecrets(t *testing.T) {
	k := remotekeys.New(secretA, secretB)
	mustSeal(t, k, testBinding(), password1) // fill the key cache
	rawB := []byte{}
	if b, err := decodeStd(secretB); err == nil {
		rawB = b
	}
	forbidden := []string{secretA, secretB, hex.EncodeToString(rawB), fmt.Sprintf("%X", mustHex(t, secretA))}
	for _, label := range []string{"narad remote aes-256-gcm key v1", "narad remote fingerprint key v1"} {
		key, err := hkdf.Key(sha512.New, mustHex(t, secretA), testSalt, label, 32)
		if err != nil {
			t.Fatal(err)
		}
		forbidden = append(forbidden, hex.EncodeToString(key))
	}
	type holder struct {
		K *remotekeys.Keyring
		k remotekeys.Keyring
	}
	values := []any{k, *k, holder{K: k, k: *k}, &holder{K: k, k: *k}, []*remotekeys.Keyring{k}}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T"} {
		for _, v := range values {
			out := fmt.Sprintf(verb, v)
			for _, bad := range forbidden {
				if bytes.Contains(bytes.ToLower([]byte(out)), bytes.ToLower([]byte(bad))) {
					t.Fatalf("fmt %s of %T shows secret material: %s", verb, v, out)
				}
			}
		}
	}
	if got := k.String(); got != "remotekeys.Keyring{NARAD_CLUSTER_SECRET: usable, NARAD_CLUSTER_SECRET_PREVIOUS: usable}" {
		t.Fatalf("String() = %s", got)
	}
}
